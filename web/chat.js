// The match page's chat (the `chat` extension, docs/protocol.md "Chat"): the players read and
// write the players' chat, spectators the spectators' (a guest only reads it), the arbiter both,
// and the arbiter turns the chat off and on and mutes a seat or a spectator's account. The
// lines come from `chat_history` (after every join or watch) and `chat` frames, the settings
// from `chat_settings`. Whatever someone wrote goes into the page as text, never as markup.

import { lang, t } from "./i18n.js";
import { el } from "./board.js";
import { describeError, playerName } from "./words.js";
import { announce } from "./ui.js";

/** The most lines the page keeps (the server sends the last 100 of each channel at a join). */
const KEEP = 300;

/** Each channel numbers its own messages: a line is known by both. */
const lineKey = (line) => `${line.channel}:${line.n}`;

/** The arbiter's two channels interleaved by time; each channel in its own order. */
const byTime = (a, b) => (a.at_ms ?? 0) - (b.at_ms ?? 0) || String(a.channel).localeCompare(String(b.channel)) || a.n - b.n;

export class ChatPanel {
  /** `view`: the match page (its `role`, `you`, `model`, `conn`, `id` and `act`). */
  constructor(view) {
    this.view = view;
    // Until `chat_history` comes the panel stays hidden: a server without the chat sends none.
    this.known = false;
    this.lines = [];
    this.enabled = true;
    this.muted = false;
    this.mutes = [];
    // The last refusal of a message (a ServerError), said in words next to the form.
    this.failure = null;
    this.draft = "";
    this.channel = "players";
    this.node = null;
    this.E = null;
  }

  // --- frames ---------------------------------------------------------------------------------

  /** Takes a `chat_history`, `chat` or `chat_settings` frame of this match; false for others. */
  onFrame(frame) {
    if (frame.type === "chat_history") {
      this.known = true;
      this.lines = (Array.isArray(frame.lines) ? [...frame.lines] : []).sort(byTime).slice(-KEEP);
      this.settings(frame, false);
    } else if (frame.type === "chat") {
      const key = lineKey(frame);
      if (this.lines.some((line) => lineKey(line) === key)) return true;
      this.lines.push(frame);
      this.lines.sort(byTime);
      if (this.lines.length > KEEP) this.lines.shift();
      // A new message is said politely, but not one's own.
      if (this.known && !this.isMine(frame)) {
        const channel = this.view.role === "arbiter" ? ` (${this.channelName(frame.channel)})` : "";
        announce(t("chat_say", { who: `${this.writer(frame)}${channel}`, text: frame.text }));
      }
    } else if (frame.type === "chat_settings") {
      this.settings(frame, true);
    } else {
      return false;
    }
    this.paint();
    return true;
  }

  settings(frame, live) {
    const was = { enabled: this.enabled, muted: this.muted, mutes: this.mutes };
    this.enabled = frame.enabled !== false;
    this.muted = frame.muted === true;
    if (Array.isArray(frame.mutes)) this.mutes = frame.mutes;
    if (!live) return;
    // What stopped a message may have changed: the last refusal no longer holds.
    this.failure = null;
    if (was.enabled !== this.enabled) announce(t(this.enabled ? "chat_now_on" : "chat_now_off"));
    if (this.view.role === "arbiter") {
      const key = (m) => (m.seat ? `seat:${m.seat}` : `name:${m.name}`);
      const before = new Set(was.mutes.map(key));
      const now = new Set(this.mutes.map(key));
      for (const m of this.mutes) if (!before.has(key(m))) announce(t("chat_muted_say", { name: this.targetName(m) }));
      for (const m of was.mutes) if (!now.has(key(m))) announce(t("chat_unmuted_say", { name: this.targetName(m) }));
    } else if (was.muted !== this.muted) {
      announce(t(this.muted ? "chat_now_muted" : "chat_now_unmuted"));
    }
  }

  // --- words ----------------------------------------------------------------------------------

  /** Who wrote a line: the seat's player, the account, or the arbiter or the organizer. */
  writer(line) {
    if ((line.role === "p1" || line.role === "p2") && this.view.model) return playerName(this.view.model, line.role);
    if (line.from) return line.from;
    if (line.role === "arbiter") return t("chat_arbiter");
    if (line.role === "organizer") return t("chat_organizer");
    return line.role || "?";
  }

  channelName(channel) {
    const key = `chat_channel_${channel}`;
    const text = t(key);
    return text === key ? String(channel) : text;
  }

  /** Whether this page wrote the line (it is shown as one's own, and not announced). */
  isMine(line) {
    const view = this.view;
    if (view.role === "player") return Boolean(view.you) && line.role === view.you;
    if (view.role === "arbiter") return line.role === "arbiter";
    const identity = view.conn.welcome?.identity;
    if (!identity || identity.kind === "guest") return false;
    if (identity.kind === "organizer") return line.role === "organizer";
    return line.role === "spectator" && line.from === identity.name;
  }

  /** A spectator without an account: reads the spectators' chat, never writes in it. */
  isGuest() {
    return this.view.role === "spectator" && (this.view.conn.welcome?.identity?.kind ?? "guest") === "guest";
  }

  errorWords(error) {
    const code = error?.code;
    const message = error?.message || code || "";
    if (code === "forbidden") {
      if (this.isGuest()) return t("chat_guest");
      if (!this.enabled && this.view.role !== "arbiter") return t("chat_off");
      if (this.muted && this.view.role !== "arbiter") return t("chat_muted");
      // A finished match's chat closes once its room leaves the server's memory.
      if (this.view.model?.status === "finished") return t("chat_closed");
      return t("chat_err_forbidden", { message });
    }
    if (code === "rate_limited") return t("chat_err_rate_limited");
    if (code === "bad_request") return t("chat_err_bad_request", { message });
    return t("chat_err_other", { message: describeError(error) });
  }

  // --- actions --------------------------------------------------------------------------------

  async send() {
    const input = this.E.input;
    const text = input.value.trim();
    if (!text) {
      input.focus();
      return;
    }
    const message = { type: "chat", match: this.view.id, text };
    if (this.view.role === "arbiter") message.channel = this.channel;
    try {
      await this.view.conn.request(message);
      this.failure = null;
      // The page may have been drawn again meanwhile (a change of language): its field now.
      if (this.E.input.value.trim() === text) this.E.input.value = "";
      this.draft = this.E.input.value;
    } catch (e) {
      this.failure = e;
    }
    this.paint();
  }

  /** The mute targets the arbiter is offered: both seats, and every spectator account that
   * wrote or is muted. */
  targets() {
    const list = [{ seat: "p1" }, { seat: "p2" }];
    const names = new Set();
    for (const line of this.lines) if (line.role === "spectator" && line.from) names.add(line.from);
    for (const m of this.mutes) if (m.name) names.add(m.name);
    for (const name of [...names].sort()) list.push({ name });
    return list;
  }

  targetName(m) {
    if (m.seat) return this.view.model ? playerName(this.view.model, m.seat) : m.seat;
    return m.name;
  }

  isMuted(m) {
    return this.mutes.some((x) => (m.seat && x.seat === m.seat) || (m.name && x.name === m.name));
  }

  // --- layout ---------------------------------------------------------------------------------

  /** The panel, drawn anew (after a change of language too); what was typed stays. */
  build() {
    const role = this.view.role;
    const E = (this.E = {});
    this.linesKey = null;
    this.mutesKey = null;
    const kind = role === "player" ? "players" : role === "arbiter" ? "arbiter" : "spectators";
    E.lines = el("ol", { class: "chat-lines", id: "chat-lines", tabindex: "0", "aria-labelledby": "chat-heading" });
    E.note = el("p", { class: "chat-note", id: "chat-note", hidden: true });
    E.error = el("p", { class: "chat-error", id: "chat-error", role: "alert" });
    E.input = el("input", {
      type: "text",
      id: "chat-text",
      maxlength: "300",
      autocomplete: "off",
      "aria-describedby": "chat-note",
      oninput: (e) => (this.draft = e.target.value),
    });
    E.input.value = this.draft;
    E.send = el("button", { type: "submit", class: "secondary", id: "chat-send", text: t("chat_send") });
    const fields = [];
    if (role === "arbiter") {
      E.channel = el("select", { id: "chat-channel", onchange: (e) => (this.channel = e.target.value) }, [
        el("option", { value: "players", text: t("chat_to_players") }),
        el("option", { value: "spectators", text: t("chat_to_spectators") }),
      ]);
      E.channel.value = this.channel;
      fields.push(el("div", { class: "field" }, [el("label", { for: "chat-channel", text: t("chat_channel_field") }), E.channel]));
    }
    E.form = el(
      "form",
      {
        class: "inline-form chat-form",
        id: "chat-form",
        onsubmit: (e) => {
          e.preventDefault();
          this.send();
        },
      },
      [...fields, el("label", { for: "chat-text", text: t("chat_label") }), el("div", { class: "row" }, [E.input, E.send]), E.error],
    );
    E.guest = el("p", { class: "chat-note", id: "chat-guest", hidden: true }, [
      `${t("chat_guest")} `,
      el("a", { href: "#/account", id: "chat-login", text: t("chat_guest_link") }),
    ]);
    const parts = [
      el("h2", { id: "chat-heading", text: t(`chat_heading_${kind}`) }),
      el("p", { class: "hint", id: "chat-about", text: t(`chat_about_${kind}`) }),
      E.lines,
      E.note,
      E.guest,
      E.form,
    ];
    if (role === "arbiter") {
      E.switch = el("button", {
        type: "button",
        class: "secondary",
        id: "chat-switch",
        onclick: () => this.view.act({ type: "set_chat", enabled: !this.enabled }),
      });
      E.mutes = el("ul", { class: "chat-mutes", id: "chat-mutes", "aria-labelledby": "chat-moderation-heading" });
      E.mutedList = el("p", { class: "hint", id: "chat-muted-list" });
      parts.push(
        el("div", { class: "chat-moderation", id: "chat-moderation" }, [
          el("h3", { id: "chat-moderation-heading", text: t("chat_moderation") }),
          el("div", { class: "row" }, [E.switch]),
          el("p", { class: "hint", text: t("chat_mute_hint") }),
          E.mutes,
          E.mutedList,
        ]),
      );
    }
    this.node = el("section", { class: "card chat", id: "chat", "aria-labelledby": "chat-heading" }, parts);
    this.paint();
    return this.node;
  }

  paint() {
    const E = this.E;
    if (!this.node || !E) return;
    this.node.hidden = !this.known;
    if (!this.known) return;
    const arbiter = this.view.role === "arbiter";
    this.paintLines();

    const guest = this.isGuest();
    E.form.hidden = guest;
    E.guest.hidden = !guest;
    const blocked = !arbiter && (!this.enabled || this.muted);
    E.input.disabled = blocked;
    E.send.disabled = blocked;
    const note = guest ? "" : !this.enabled ? t(arbiter ? "chat_off_arbiter" : "chat_off") : this.muted && !arbiter ? t("chat_muted") : "";
    E.note.textContent = note;
    E.note.hidden = !note;
    const error = this.failure ? this.errorWords(this.failure) : "";
    if (E.error.textContent !== error) E.error.textContent = error;
    if (arbiter) this.paintModeration();
  }

  /** The lines, oldest first; drawn again only when a line came or went. */
  paintLines() {
    const E = this.E;
    const key = `${lang()}|${this.lines.map(lineKey).join(",")}`;
    if (key === this.linesKey) return;
    const atEnd = this.linesKey === null || E.lines.scrollHeight - E.lines.scrollTop - E.lines.clientHeight < 40;
    this.linesKey = key;
    const items = this.lines.map((line) => this.lineItem(line));
    E.lines.replaceChildren(...(items.length ? items : [el("li", { class: "empty", text: t("chat_empty") })]));
    if (atEnd) E.lines.scrollTop = E.lines.scrollHeight;
  }

  lineItem(line) {
    const mine = this.isMine(line);
    const who = this.writer(line);
    const parts = [];
    const time = clockTime(line.at_ms);
    if (time) parts.push(el("time", { class: "chat-time", datetime: new Date(line.at_ms).toISOString(), text: time }), " ");
    if (this.view.role === "arbiter") {
      parts.push(el("span", { class: `chat-channel chat-channel-${line.channel === "spectators" ? "spectators" : "players"}`, text: this.channelName(line.channel) }), " ");
    }
    parts.push(
      el("span", { class: "chat-who", text: mine ? `${who} (${t("chat_you")}):` : `${who}:` }),
      " ",
      el("span", { class: "chat-text", text: line.text }),
    );
    return el("li", { class: mine ? "mine" : null, "data-n": String(line.n), "data-channel": String(line.channel), "data-role": String(line.role) }, parts);
  }

  /** The arbiter's switch and mutes; the list is drawn again only when it changed, and the
   * button that had the focus keeps it. */
  paintModeration() {
    const E = this.E;
    const switchText = t(this.enabled ? "chat_turn_off" : "chat_turn_on");
    if (E.switch.textContent !== switchText) E.switch.textContent = switchText;
    const targets = this.targets();
    const key = JSON.stringify([lang(), targets.map((m) => [m.seat || "", m.name || "", this.targetName(m), this.isMuted(m)])]);
    if (key === this.mutesKey) return;
    this.mutesKey = key;
    const focused = document.activeElement?.dataset?.muteKey;
    E.mutes.replaceChildren(
      ...targets.map((m) => {
        const muted = this.isMuted(m);
        const name = this.targetName(m);
        return el("li", {}, [
          el("button", {
            type: "button",
            class: muted ? "primary" : "secondary",
            id: m.seat ? `mute-${m.seat}` : null,
            "data-mute-key": m.seat ? `seat:${m.seat}` : `name:${m.name}`,
            "data-name": m.name || null,
            text: t(muted ? "chat_unmute" : "chat_mute", { name }),
            onclick: () => this.view.act({ type: "mute", ...(m.seat ? { seat: m.seat } : { name: m.name }), muted: !muted }),
          }),
        ]);
      }),
    );
    if (focused) {
      for (const button of E.mutes.querySelectorAll("button")) if (button.dataset.muteKey === focused) button.focus();
    }
    const muted = targets.filter((m) => this.isMuted(m)).map((m) => this.targetName(m));
    E.mutedList.textContent = muted.length ? t("chat_muted_list", { names: muted.join(", ") }) : t("chat_muted_none");
  }
}

/** The time of day a message was written, "14:05". */
function clockTime(ms) {
  if (!Number.isFinite(ms)) return "";
  try {
    return new Intl.DateTimeFormat(lang() === "tr" ? "tr-TR" : "en-GB", { hour: "2-digit", minute: "2-digit" }).format(new Date(ms));
  } catch {
    return "";
  }
}

// The account page (`#/account`): log in, register (when the server takes registrations) or
// log out. A login's session token is kept in this browser (localStorage) and said in `hello`
// by the player's page; the password never is.

import { t } from "./i18n.js";
import { el } from "./board.js";
import { Connection } from "./net.js";
import { describeError } from "./words.js";
import { announce, conn, main } from "./ui.js";

const SESSION_KEY = "hakem.session";

/** The session this browser keeps: `{name, token}`, or null. */
export function storedSession() {
  try {
    const session = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    return session && typeof session.token === "string" && typeof session.name === "string" ? session : null;
  } catch {
    return null;
  }
}

function keepSession(name, token) {
  localStorage.setItem(SESSION_KEY, JSON.stringify({ name, token }));
}

export function forgetSession() {
  localStorage.removeItem(SESSION_KEY);
}

export class AccountView {
  constructor() {
    this.error = null;
    this.note = null;
    this.busy = false;
    // The names typed, kept when the page is drawn again (passwords are not kept).
    this.names = { login: "", register: "" };
    document.title = `hakem — ${t("account_title")}`;
    this.paint();
  }

  destroy() {}

  relabel() {
    document.title = `hakem — ${t("account_title")}`;
    this.paint();
  }

  async submit(kind, form) {
    const name = form.querySelector("[name=name]").value.trim();
    this.names[kind] = name;
    const password = form.querySelector("[name=password]").value;
    if (kind === "register" && password !== form.querySelector("[name=again]").value) {
      this.fail(t("account_passwords_differ"));
      return;
    }
    this.busy = true;
    this.error = null;
    this.paint();
    try {
      await conn.open();
      const reply = await conn.request({ type: kind, name, password });
      if (reply.token) {
        keepSession(reply.name, reply.token);
        announce(t("account_logged_in", { name: reply.name }));
        location.hash = "#/player";
        return;
      }
      // Registered, waiting for the organizer's approval.
      this.note = t("account_pending", { name: reply.name });
      announce(this.note);
    } catch (e) {
      const own = { unauthorized: "account_wrong", rate_limited: "account_slow_down" }[e.code];
      this.error = own ? t(own) : describeError(e);
      announce(this.error);
    }
    this.busy = false;
    this.paint();
  }

  fail(text) {
    this.error = text;
    announce(text);
    this.paint();
  }

  async logout() {
    const session = storedSession();
    if (session) {
      // The session is forgotten here only once the server has ended it (or no longer
      // knows it): a token left alive by a failed logout would stay usable.
      const own = new Connection(session.token);
      try {
        const welcome = await own.open();
        if (welcome.identity?.kind !== "guest") await own.request({ type: "logout" });
      } catch {
        own.close();
        this.note = null;
        this.fail(t("account_logout_failed"));
        return;
      }
      own.close();
    }
    forgetSession();
    this.error = null;
    this.note = t("account_logged_out");
    announce(this.note);
    this.paint();
  }

  /** Everything the server keeps of the account, as a JSON file (the token goes in a header,
   * never in an address). */
  async download() {
    const session = storedSession();
    if (!session) return;
    try {
      const response = await fetch("/api/account/export", { headers: { Authorization: `Bearer ${session.token}` }, cache: "no-store" });
      if (!response.ok) throw new Error(String(response.status));
      const url = URL.createObjectURL(await response.blob());
      const link = el("a", { href: url, download: `hakem-${session.name}.json` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      announce(t("account_exported"));
    } catch {
      this.fail(t("account_export_failed"));
    }
  }

  form(kind) {
    const id = (field) => `${kind}-${field}`;
    const field = (name, label, type, autocomplete) => el("div", { class: "field" }, [
      el("label", { for: id(name), text: label }),
      el("input", {
        id: id(name),
        name,
        type,
        autocomplete,
        required: true,
        ...(type === "password" ? { minlength: "8", maxlength: "128" } : { maxlength: "40", value: this.names[kind] || null }),
      }),
    ]);
    const fields = [
      field("name", t("account_name"), "text", "username"),
      field("password", t("account_password"), "password", kind === "login" ? "current-password" : "new-password"),
    ];
    if (kind === "register") fields.push(field("again", t("account_password_again"), "password", "new-password"));
    const form = el("form", { id: `${kind}-form`, "aria-labelledby": `${kind}-heading` }, [
      el("div", { class: "fields" }, fields),
      el("button", { type: "submit", id: `${kind}-button`, disabled: this.busy, text: t(kind === "login" ? "account_login" : "account_register") }),
    ]);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit(kind, form);
    });
    return el("section", { class: "card" }, [
      el("h2", { id: `${kind}-heading`, text: t(kind === "login" ? "account_login_heading" : "account_register_heading") }),
      kind === "register" ? el("p", { class: "hint", text: t("account_register_hint") }) : null,
      form,
    ]);
  }

  paint() {
    const session = storedSession();
    const back = el("p", { class: "back" }, [el("a", { href: "#/", text: t("back_home") })]);
    const messages = [
      this.error ? el("p", { class: "error", id: "account-error", role: "alert", text: this.error }) : null,
      this.note ? el("p", { class: "note", id: "account-note", text: this.note }) : null,
    ].filter(Boolean);
    if (session) {
      main.replaceChildren(
        back,
        el("h1", { class: "page-title", id: "account-title", text: t("account_title") }),
        ...messages,
        el("section", { class: "card" }, [
          el("p", { id: "account-who", text: t("account_as", { name: session.name }) }),
          el("p", {}, [el("a", { href: "#/player", id: "account-player", text: t("account_your_page") })]),
          el("button", { type: "button", id: "export-button", onclick: () => this.download(), text: t("account_export") }),
          " ",
          el("button", { type: "button", id: "logout-button", onclick: () => this.logout(), text: t("account_logout") }),
        ]),
      );
      return;
    }
    main.replaceChildren(
      back,
      el("h1", { class: "page-title", id: "account-title", text: t("account_title") }),
      ...messages,
      this.form("login"),
      this.form("register"),
    );
  }
}

// hakem web client: routes by the URL's fragment to the lobby (`#/`), a match page
// (`#/match/ID`), a tournament page (`#/tournament/ID`), a replay (`#/replay/ID`), a player's
// page (`#/player`), another player's (`#/profile/NAME`) or the account page (`#/account`), and keeps the language switch and
// the connection banner. Everything a page shows comes from the server (protocol v1 with the
// `batch` and `boards` extensions, and the read-only HTTP API); no page keeps rules of its own.

import { t, lang, setLang, onLangChange } from "./i18n.js";
import { AccountView } from "./account.js";
import { LobbyView } from "./lobby.js";
import { MatchView } from "./match.js";
import { PlayerView, ProfileView } from "./player.js";
import { ReplayView } from "./replay.js";
import { TournamentView } from "./tournament.js";
import { conn, paintConnection, showAlert } from "./ui.js";

function connectionBanner() {
  conn.onStatus(paintConnection);
}

// ---------------------------------------------------------------------------------------------
// Language switch

function paintLangSwitch() {
  const button = document.getElementById("lang-switch");
  const next = lang() === "tr" ? "en" : "tr";
  button.textContent = next === "tr" ? "Türkçe" : "English";
  button.setAttribute("lang", next);
  button.setAttribute("aria-label", next === "tr" ? "Türkçe'ye geç" : "Switch to English");
  document.documentElement.lang = lang();
  document.getElementById("skip-link").textContent = t("skip_to_content");
  document.getElementById("home-link").setAttribute("aria-label", t("home_label"));
  document.getElementById("tagline").textContent = t("tagline");
  document.getElementById("footer-text").textContent = t("footer");
}

document.getElementById("lang-switch").addEventListener("click", () => {
  setLang(lang() === "tr" ? "en" : "tr");
});

// ---------------------------------------------------------------------------------------------
// Router

let view = null;

function parseHash() {
  const hash = location.hash.replace(/^#/, "");
  const [path, query = ""] = hash.split("?");
  const params = new URLSearchParams(query);
  const m = /^\/match\/([^/]+)$/.exec(path);
  if (m) return { name: "match", id: decodeURIComponent(m[1]), params };
  if (path === "/player") return { name: "player", params };
  if (path === "/account") return { name: "account", params };
  const pm = /^\/profile\/([^/]+)$/.exec(path);
  if (pm) return { name: "profile", id: decodeURIComponent(pm[1]), params };
  const rm = /^\/replay\/([^/]+)$/.exec(path);
  if (rm) return { name: "replay", id: decodeURIComponent(rm[1]), params };
  const tm = /^\/tournament\/([^/]+)$/.exec(path);
  if (tm) return { name: "tournament", id: decodeURIComponent(tm[1]), params };
  return { name: "lobby", params };
}

function route() {
  view?.destroy();
  view = null;
  showAlert("");
  let where;
  try {
    where = parseHash();
  } catch {
    // A fragment that is not a valid address (a bad %-escape): the lobby.
    where = { name: "lobby", params: new URLSearchParams() };
  }
  if (where.name === "match") view = new MatchView(where.id, where.params);
  else if (where.name === "tournament") view = new TournamentView(where.id, where.params);
  else if (where.name === "replay") view = new ReplayView(where.id);
  else if (where.name === "player") view = new PlayerView(where.params);
  else if (where.name === "account") view = new AccountView();
  else if (where.name === "profile") view = new ProfileView(where.id);
  else view = new LobbyView();
}

window.addEventListener("hashchange", route);
onLangChange(() => {
  paintLangSwitch();
  view?.relabel();
});

// ---------------------------------------------------------------------------------------------
// Start

paintLangSwitch();
connectionBanner();
route();

// What every page shares: the one connection to the server, the page's main region, the
// polite live region and the alert line.

import { Connection } from "./net.js";
import { el } from "./board.js";
import { t } from "./i18n.js";

export const conn = new Connection();
export const main = document.getElementById("main");
const announcer = document.getElementById("announcer");
const alertBox = document.getElementById("alert");

/** The banner under the header that says a connection was lost (the page's, or a page's own). */
export function paintConnection(status) {
  const banner = document.getElementById("connection");
  banner.hidden = status === "open" || status === "closed" || status === "connecting";
  banner.textContent = status === "reconnecting" ? t("reconnecting") : "";
}

export const other = (seat) => (seat === "p1" ? "p2" : "p1");

/** Says `text` through the polite live region (and keeps the last few lines there). */
export function announce(text) {
  if (!text) return;
  const line = el("p", { text });
  announcer.append(line);
  while (announcer.childElementCount > 6) announcer.firstElementChild.remove();
}

let alertTimer = null;
export function showAlert(text) {
  clearTimeout(alertTimer);
  alertBox.textContent = text;
  alertBox.hidden = !text;
  if (text) alertTimer = setTimeout(() => showAlert(""), 10000);
}

const shown = new WeakMap();

/** True when `node` already shows `data`; otherwise remembers it. Lists polled every few
 * seconds are drawn again only when they change, so that a focused link keeps the focus. */
export function unchanged(node, data) {
  const key = JSON.stringify(data);
  if (shown.get(node) === key) return true;
  shown.set(node, key);
  return false;
}

/** A match the lobby just created against the computer: its page says so and focuses Ready. */
export const handoff = { arrival: null };

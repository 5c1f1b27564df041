// The boards of the three games, drawn with plain elements so that the board is a labelled ARIA
// grid: one focusable cell (a roving cursor) that the arrow keys move. The board knows no rules:
// what is legal comes from the server's `legal_moves`, handed in by the page.

import { t } from "./i18n.js";

const QUADRANTS = ["nw", "ne", "sw", "se"];
const PENTE_COLUMNS = "ABCDEFGHJKLMNOPQRST";

export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** A curved arrow: clockwise or counter-clockwise. */
function turnIcon(dir) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(SVG_NS, "path");
  // An arc of about 300 degrees with an arrow head at its end.
  path.setAttribute(
    "d",
    dir === "cw"
      ? "M12 4a8 8 0 1 1-7.4 5M12 4l-1-3M12 4 9 5.5"
      : "M12 4a8 8 0 1 0 7.4 5M12 4l1-3M12 4l3 1.5",
  );
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", "currentColor");
  path.setAttribute("stroke-width", "2.4");
  path.setAttribute("stroke-linecap", "round");
  path.setAttribute("stroke-linejoin", "round");
  svg.append(path);
  return svg;
}

/** Where a marble placed at `cell` ends after turning `quadrant` in `dir` (geometry only). */
export function pentagoTurnedCell(cell, quadrant, dir) {
  const file = cell.charCodeAt(0) - 97;
  const rank = Number(cell.slice(1)) - 1;
  const qx = quadrant[1] === "e" ? 3 : 0;
  const qy = quadrant[0] === "n" ? 3 : 0;
  let x = file - qx;
  let y = rank - qy;
  if (x < 0 || x > 2 || y < 0 || y > 2) return cell;
  [x, y] = dir === "cw" ? [y, 2 - x] : [2 - y, x];
  return String.fromCharCode(97 + qx + x) + (qy + y + 1);
}

/** Reads a Pentago move `d4ne`, `d4ne'` or `d4`. */
export function parsePentagoMove(mv) {
  const m = /^([a-f][1-6])(?:(nw|ne|sw|se)('?))?$/.exec(mv || "");
  if (!m) return null;
  return { cell: m[1], quadrant: m[2] || null, dir: m[2] ? (m[3] ? "ccw" : "cw") : null };
}

/** The base: a grid of `size` by `size` cells with a roving cursor. */
class GridBoard {
  constructor(size, callbacks) {
    this.size = size;
    this.callbacks = callbacks;
    this.cursor = { r: Math.floor(size / 2), c: Math.floor(size / 2) };
    this.cells = [];
    this.grid = el("div", {
      role: "grid",
      class: "grid",
      "aria-describedby": "board-keys",
      onkeydown: (e) => this.onKey(e),
    });
    for (let r = 0; r < size; r++) {
      const row = el("div", { role: "row", class: "row" });
      const line = [];
      for (let c = 0; c < size; c++) {
        const name = this.cellName(r, c);
        const cell = el("div", {
          role: "gridcell",
          class: "cell",
          tabindex: "-1",
          "data-cell": name,
          onclick: () => {
            this.setCursor(r, c, false);
            this.callbacks.onCell?.(name);
          },
          onmouseenter: () => this.callbacks.onHover?.(name),
          onfocus: () => {
            if (this.cursor.r !== r || this.cursor.c !== c) this.setCursor(r, c, false);
            this.callbacks.onHover?.(name);
          },
        });
        cell.append(el("span", { class: "stone", "aria-hidden": "true" }));
        row.append(cell);
        line.push(cell);
      }
      this.grid.append(row);
      this.cells.push(line);
    }
    this.grid.addEventListener("mouseleave", () => this.callbacks.onHover?.(null));
    this.setCursor(this.cursor.r, this.cursor.c, false);
  }

  cell(name) {
    const pos = this.position(name);
    return pos ? this.cells[pos.r][pos.c] : null;
  }

  setCursor(r, c, focus = true) {
    r = Math.max(0, Math.min(this.size - 1, r));
    c = Math.max(0, Math.min(this.size - 1, c));
    const old = this.cells[this.cursor.r][this.cursor.c];
    old.tabIndex = -1;
    old.classList.remove("cursor");
    this.cursor = { r, c };
    const cell = this.cells[r][c];
    cell.tabIndex = 0;
    cell.classList.add("cursor");
    if (focus) cell.focus();
  }

  cursorName() {
    return this.cellName(this.cursor.r, this.cursor.c);
  }

  focus() {
    this.cells[this.cursor.r][this.cursor.c].focus();
  }

  hasFocus() {
    return this.grid.contains(document.activeElement);
  }

  onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const { r, c } = this.cursor;
    const moves = {
      ArrowUp: [r - 1, c],
      ArrowDown: [r + 1, c],
      ArrowLeft: [r, c - 1],
      ArrowRight: [r, c + 1],
      Home: [r, 0],
      End: [r, this.size - 1],
      PageUp: [0, c],
      PageDown: [this.size - 1, c],
    };
    if (moves[e.key]) {
      e.preventDefault();
      this.setCursor(...moves[e.key]);
      return;
    }
    if (e.key === "Enter") {
      e.preventDefault();
      this.callbacks.onCell?.(this.cursorName());
    }
  }

  /** Sets a cell's marks and its spoken label. */
  paint(cell, classes, label) {
    const keep = cell.classList.contains("cursor");
    cell.className = ["cell", ...classes, keep ? "cursor" : ""].filter(Boolean).join(" ");
    if (cell.getAttribute("aria-label") !== label) cell.setAttribute("aria-label", label);
  }
}

/** Coordinates around a board, hidden from screen readers (every cell says its own name). */
function coordinates(labels, side) {
  return el(
    "div",
    { class: `coords coords-${side}`, "aria-hidden": "true" },
    labels.map((text) => el("span", { text })),
  );
}

// ---------------------------------------------------------------------------------------------
// Pentago

export class PentagoBoard extends GridBoard {
  constructor(callbacks) {
    super(6, callbacks);
    this.root = el("div", { class: "board pentago" });
    this.frame = el("div", { class: "frame" });
    this.quadrants = {};
    for (const q of QUADRANTS) {
      const bg = el("div", { class: `quadrant q-${q}`, "aria-hidden": "true" });
      bg.append(el("span", { class: "turned-badge" }));
      this.quadrants[q] = bg;
      this.frame.append(bg);
    }
    this.frame.append(this.grid);
    this.turnButtons = {};
    for (const q of QUADRANTS) {
      const group = el("div", { class: `turns turns-${q}` });
      for (const dir of ["ccw", "cw"]) {
        const button = el("button", {
          type: "button",
          class: `turn turn-${dir}`,
          "data-quadrant": q,
          "data-dir": dir,
          onclick: () => this.callbacks.onTurn?.(q, dir),
          onmouseenter: () => bgHover(q, true),
          onmouseleave: () => bgHover(q, false),
          onfocus: () => bgHover(q, true),
          onblur: () => bgHover(q, false),
        });
        button.append(turnIcon(dir));
        group.append(button);
        this.turnButtons[q + dir] = button;
      }
      this.frame.append(group);
    }
    const bgHover = (q, on) => this.quadrants[q].classList.toggle("hover", on);
    this.root.append(
      coordinates(["6", "5", "4", "3", "2", "1"], "left"),
      this.frame,
      coordinates(["a", "b", "c", "d", "e", "f"], "bottom"),
    );
    this.el = this.root;
  }

  cellName(r, c) {
    return String.fromCharCode(97 + c) + (6 - r);
  }

  position(name) {
    const m = /^([a-f])([1-6])$/.exec(name);
    return m ? { r: 6 - Number(m[2]), c: m[1].charCodeAt(0) - 97 } : null;
  }

  /**
   * view: rows, marks ({x, o} as words), lastMove ({cell, quadrant, dir}), pending,
   * legal (null, or {cells: Set, turns: Set of "ne:cw"}), canTurn (a placement waits for a
   * turn), clockwiseOnly, selectedQuadrant.
   */
  update(view) {
    this.grid.setAttribute("aria-label", view.label);
    const rows = view.rows || [];
    const last = view.lastMove;
    const lastCell = last ? (last.quadrant ? pentagoTurnedCell(last.cell, last.quadrant, last.dir) : last.cell) : null;
    for (let r = 0; r < 6; r++) {
      for (let c = 0; c < 6; c++) {
        const name = this.cellName(r, c);
        let { classes, label } = pointLook(view, name, (rows[r] || "")[c]);
        if (view.pending && view.pending.cell === name && !view.pending.quadrant) {
          classes.push("pending");
          label += ", " + t("placed_not_turned");
        } else if (lastCell === name) {
          classes.push("last");
          label += ", " + t("last_move");
        }
        this.paint(this.cells[r][c], classes, label);
      }
    }
    for (const q of QUADRANTS) {
      const bg = this.quadrants[q];
      const turned = last && last.quadrant === q;
      bg.classList.toggle("turned", !!turned);
      bg.classList.toggle("selected", view.selectedQuadrant === q);
      bg.querySelector(".turned-badge").textContent = turned ? (last.dir === "cw" ? "↻" : "↺") : "";
      for (const dir of ["cw", "ccw"]) {
        const button = this.turnButtons[q + dir];
        button.hidden = dir === "ccw" && view.clockwiseOnly;
        const allowed = view.canTurn && (!view.legal || view.legal.turns.has(`${q}:${dir}`));
        button.disabled = !allowed;
        button.setAttribute("aria-label", t("turn_button", { quadrant: t(`q_${q}`), dir: t(`dir_${dir}`) }));
        button.title = button.getAttribute("aria-label");
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Quoridor

export class QuoridorBoard extends GridBoard {
  constructor(callbacks) {
    super(9, callbacks);
    this.cursor = { r: 8, c: 4 };
    this.setCursor(8, 4, false);
    this.root = el("div", { class: "board quoridor" });
    this.frame = el("div", { class: "frame" });
    this.walls = el("div", { class: "walls", "aria-hidden": "true" });
    this.preview = el("div", { class: "wall preview", hidden: true });
    this.walls.append(this.preview);
    this.frame.append(this.grid, this.walls);
    this.root.append(
      coordinates(["9", "8", "7", "6", "5", "4", "3", "2", "1"], "left"),
      this.frame,
      coordinates(["a", "b", "c", "d", "e", "f", "g", "h", "i"], "bottom"),
    );
    this.el = this.root;
    this.wallKey = "";
  }

  cellName(r, c) {
    return String.fromCharCode(97 + c) + (9 - r);
  }

  position(name) {
    const m = /^([a-i])([1-9])$/.exec(name);
    return m ? { r: 9 - Number(m[2]), c: m[1].charCodeAt(0) - 97 } : null;
  }

  static placeWall(node, wall) {
    const m = /^([a-h])([1-8])([hv])$/.exec(wall);
    if (!m) return false;
    const f = m[1].charCodeAt(0) - 97;
    const r = Number(m[2]) - 1;
    node.classList.toggle("h", m[3] === "h");
    node.classList.toggle("v", m[3] === "v");
    node.style.setProperty("--f", f);
    node.style.setProperty("--r", r);
    return true;
  }

  /** Shows where a wall would go (wall mode), or nothing. */
  showPreview(wall, legal) {
    if (!wall || !QuoridorBoard.placeWall(this.preview, wall)) {
      this.preview.hidden = true;
      return;
    }
    this.preview.hidden = false;
    this.preview.classList.toggle("illegal", legal === false);
  }

  /**
   * view: pawns {first, second}, walls [..], names {first, second}, lastMove, legal
   * (null or {cells: Set, walls: Set}), mode ("pawn", "h", "v"), label.
   */
  update(view) {
    this.grid.setAttribute("aria-label", view.label);
    this.grid.classList.toggle("wall-mode", view.mode !== "pawn");
    const pawns = view.pawns || {};
    for (let r = 0; r < 9; r++) {
      for (let c = 0; c < 9; c++) {
        const name = this.cellName(r, c);
        const classes = [];
        let label = name + ", ";
        if (pawns.first === name) {
          classes.push("has-first");
          label += t("pawn_of", { name: view.names.first });
        } else if (pawns.second === name) {
          classes.push("has-second");
          label += t("pawn_of", { name: view.names.second });
        } else {
          label += t("empty");
        }
        if (r === 0) classes.push("goal-first");
        if (r === 8) classes.push("goal-second");
        if (view.legal) {
          if (view.mode === "pawn" && view.legal.cells.has(name)) classes.push("legal");
          if (view.mode !== "pawn" && view.legal.walls.has(name + view.mode)) classes.push("legal");
        }
        if (view.lastMove === name) {
          classes.push("last");
          label += ", " + t("last_move");
        }
        this.paint(this.cells[r][c], classes, label);
      }
    }
    const key = (view.walls || []).join(" ") + "|" + view.lastMove;
    if (key !== this.wallKey) {
      this.wallKey = key;
      for (const node of [...this.walls.querySelectorAll(".wall:not(.preview)")]) node.remove();
      for (const wall of view.walls || []) {
        const node = el("div", { class: "wall" });
        if (wall === view.lastMove) node.classList.add("last");
        if (QuoridorBoard.placeWall(node, wall)) this.walls.append(node);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pente

export class PenteBoard extends GridBoard {
  constructor(callbacks) {
    super(19, callbacks);
    this.root = el("div", { class: "board pente" });
    this.frame = el("div", { class: "frame" });
    this.frame.append(this.grid);
    const rows = [];
    for (let n = 19; n >= 1; n--) rows.push(String(n));
    this.root.append(
      coordinates(rows, "left"),
      this.frame,
      coordinates(PENTE_COLUMNS.split(""), "bottom"),
    );
    this.el = this.root;
    for (let r = 0; r < 19; r++) {
      for (let c = 0; c < 19; c++) {
        const cell = this.cells[r][c];
        if (r === 0) cell.classList.add("edge-top");
        if (r === 18) cell.classList.add("edge-bottom");
        if (c === 0) cell.classList.add("edge-left");
        if (c === 18) cell.classList.add("edge-right");
      }
    }
  }

  cellName(r, c) {
    return PENTE_COLUMNS[c] + (19 - r);
  }

  position(name) {
    const m = /^([A-HJ-T])([0-9]{1,2})$/.exec(name);
    if (!m) return null;
    const row = Number(m[2]);
    if (row < 1 || row > 19) return null;
    return { r: 19 - row, c: PENTE_COLUMNS.indexOf(m[1]) };
  }

  paint(cell, classes, label) {
    const edges = ["edge-top", "edge-bottom", "edge-left", "edge-right", "star"].filter((e) =>
      cell.classList.contains(e),
    );
    super.paint(cell, [...classes, ...edges], label);
  }

  /** view: rows, marks, lastMove, legal (null or {cells: Set}), label. */
  update(view) {
    this.grid.setAttribute("aria-label", view.label);
    const rows = view.rows || [];
    for (let r = 0; r < 19; r++) {
      for (let c = 0; c < 19; c++) {
        const name = this.cellName(r, c);
        let { classes, label } = pointLook(view, name, (rows[r] || "")[c]);
        if (name === "K10") classes.push("star");
        if (view.lastMove === name) {
          classes.push("last");
          label += ", " + t("last_move");
        }
        this.paint(this.cells[r][c], classes, label);
      }
    }
  }
}

/** A Pentago cell's or a Pente point's classes and spoken label: its stone, or empty (and legal). */
function pointLook(view, name, mark) {
  if (mark === "x" || mark === "o") return { classes: [`has-${mark}`], label: `${name}, ${view.marks[mark]}` };
  return { classes: view.legal?.cells.has(name) ? ["legal"] : [], label: `${name}, ${t("empty")}` };
}

export function createBoard(game, callbacks) {
  switch (game) {
    case "pentago":
      return new PentagoBoard(callbacks);
    case "quoridor":
      return new QuoridorBoard(callbacks);
    case "pente":
      return new PenteBoard(callbacks);
    default:
      return null;
  }
}

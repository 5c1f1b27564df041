#!/usr/bin/env python3
"""Cross-check hakem's Dutch pairing (2017 rules) against py4swiss on random tournaments.

For each of N seeded random tournaments (6 to 40 players), every round is paired by
`hakem tournament pair --rules dutch2017`; from round 2 on, the same history is also paired by
py4swiss's Dutch engine (FIDE C.04.3 as in force until 2026, i.e. the 2017 text), and the two
pairings are compared: the set of (white, black) boards, so pairs and colours, and the
pairing-allocated bye. Board order is not compared. The tournament always continues with hakem's
pairing and random results (draws, forfeits, half-point and zero-point byes, absent players).

The run is reproducible: tournament I of seed S is drawn from random.Random(f"{S}:{I}") alone,
so `--only I` replays one tournament exactly.

Prints `N passed, M failed` (rounds compared) and the first differences in detail; exit status
0 only if every compared round agrees (2 on a usage or setup error).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

try:
    from py4swiss.engines import DutchEngine
    from py4swiss.engines.common import PairingError
    from py4swiss.trf import TrfParser
except ImportError:  # pragma: no cover - reported by main()
    DutchEngine = None


# --------------------------------------------------------------------------------------------
# Tournament model and TRF writing


@dataclass
class Entry:
    """One round of one player, as a TRF round entry: opponent (0 for none), colour, result."""

    opponent: int
    colour: str  # "w", "b" or "-"
    result: str  # "1", "=", "0", "+", "-", "U", "H", "Z"

    def text(self) -> str:
        opp = "0000" if self.opponent == 0 else f"{self.opponent:4d}"
        return f"{opp} {self.colour} {self.result}"


POINTS = {"1": 2, "=": 1, "0": 0, "+": 2, "-": 0, "U": 2, "H": 1, "Z": 0}  # half points


@dataclass
class Tournament:
    name: str
    players: int
    rounds: int
    initial: str  # "white1" or "black1"
    history: list[list[Entry]] = field(default_factory=list)  # per player, per round

    def __post_init__(self) -> None:
        if not self.history:
            self.history = [[] for _ in range(self.players)]

    def trf(self) -> str:
        """The TRF(x) of the history. A player who already has an entry for the round being
        paired (H or Z) is absent from it; the score field counts every entry written (py4swiss
        checks it; hakem recomputes scores from the entries)."""
        lines = [f"012 {self.name}", f"XXR {self.rounds}", f"XXC {self.initial}"]
        totals = [sum(POINTS[e.result] for e in h) for h in self.history]
        order = sorted(range(self.players), key=lambda i: (-totals[i], i))
        rank = {i: r + 1 for r, i in enumerate(order)}
        for i, h in enumerate(self.history):
            pid = i + 1
            halves = totals[i]
            line = list(
                f"001 {pid:4d}      {f'Test{pid:04d} Player{pid:04d}':<33} "
                f"{2400 - 10 * pid:4d}"
            )
            line += [" "] * (80 - len(line))
            line += list(f"{halves // 2:2d}.{5 if halves % 2 else 0} {rank[i]:4d}")
            text = "".join(line)
            for e in h:
                text += "  " + e.text()
            lines.append(text.rstrip())
        return "\n".join(lines) + "\n"


@dataclass
class Pairing:
    boards: frozenset[tuple[int, int]]  # (white, black)
    bye: int | None

    def text(self) -> str:
        boards = " ".join(f"{w}-{b}" for w, b in sorted(self.boards))
        return boards + (f" bye {self.bye}" if self.bye else "")


NO_PAIRING = "NO_PAIRING"


def parse_engine_text(text: str) -> Pairing | str:
    lines = [ln.split() for ln in text.strip().splitlines() if ln.strip()]
    if lines and lines[0] == [NO_PAIRING]:
        return NO_PAIRING
    count = int(lines[0][0])
    rows = lines[1:]
    if len(rows) != count:
        raise ValueError(f"{count} pairs announced, {len(rows)} given:\n{text}")
    boards, bye = set(), None
    for w, b in ((int(a), int(c)) for a, c in rows):
        if b == 0:
            if bye is not None:
                raise ValueError(f"two byes:\n{text}")
            bye = w
        else:
            boards.add((w, b))
    return Pairing(frozenset(boards), bye)


# --------------------------------------------------------------------------------------------
# The two engines


def pair_hakem(hakem: str, trf_path: Path) -> Pairing | str:
    out = subprocess.run(
        [hakem, "tournament", "pair", "--trf", str(trf_path), "--rules", "dutch2017"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode == 1 and out.stdout.strip() == NO_PAIRING:
        return NO_PAIRING
    if out.returncode != 0:
        return f"ERROR exit {out.returncode}: {out.stdout.strip()} {out.stderr.strip()}"
    try:
        return parse_engine_text(out.stdout)
    except (ValueError, IndexError) as e:
        return f"ERROR bad output: {e}"


def pair_py4swiss(trf_path: Path) -> Pairing | str:
    try:
        trf = TrfParser.parse(trf_path, strict=True)
        pairs = DutchEngine.generate_pairings(trf)
    except PairingError:
        return NO_PAIRING
    except Exception as e:  # noqa: BLE001 - any failure is a finding, not a crash
        return f"ERROR {type(e).__name__}: {e}"
    boards = frozenset((p.white, p.black) for p in pairs if p.black != 0)
    byes = [p.white for p in pairs if p.black == 0]
    return Pairing(boards, byes[0] if byes else None)


# --------------------------------------------------------------------------------------------
# Random tournaments


@dataclass
class Style:
    draw: float  # share of drawn games
    absent: float  # chance per player and round of a known absence (H or Z)
    forfeit: float  # chance per game that someone does not show up
    withdraw: bool  # one player withdraws (Z from some round on)
    late: int  # players entering late (Z in round 1, sometimes round 2 too)


def draw_style(rng: random.Random) -> Style:
    return Style(
        draw=rng.choice([0.0, 0.1, 0.25, 0.4, 0.5]),
        absent=rng.choice([0.0, 0.0, 0.02, 0.05]),
        forfeit=rng.choice([0.0, 0.0, 0.02, 0.05]),
        withdraw=rng.random() < 0.25,
        late=rng.choice([0, 0, 0, 1, 2]),
    )


def absences(rng: random.Random, t: Tournament, style: Style, rnd: int, gone: dict[int, int]):
    """Entries for the players who will not be paired in round `rnd` (1-based)."""
    out = {}
    for i in range(t.players):
        if i in gone and rnd >= gone[i]:
            out[i] = Entry(0, "-", "Z")
        elif rnd == 1 and i >= t.players - style.late:
            out[i] = Entry(0, "-", "Z")
        elif rnd == 2 and i >= t.players - style.late and rng.random() < 0.5:
            out[i] = Entry(0, "-", "Z")
        elif rng.random() < style.absent:
            out[i] = Entry(0, "-", rng.choice("HZ"))
    return out


def game_result(rng: random.Random, style: Style, w: int, b: int) -> tuple[str, str]:
    if rng.random() < style.forfeit:
        k = rng.random()
        if k < 0.2:
            return "-", "-"
        return ("+", "-") if k < 0.6 else ("-", "+")
    r = rng.random()
    if r < style.draw:
        return "=", "="
    # The lower pairing number is the stronger player and wins 65 % of decisive games.
    strong_white = w < b
    white_wins = (rng.random() < 0.65) == strong_white
    return ("1", "0") if white_wins else ("0", "1")


@dataclass
class Diff:
    tournament: int
    seed: str
    round: int
    players: int
    trf: str
    hakem: Pairing | str
    py4swiss: Pairing | str
    path: Path | None = None


def play(index: int, seed: int, hakem: str, work: Path, diffs: list[Diff], log) -> tuple[int, int]:
    """Plays tournament `index`; returns (passed, failed) rounds."""
    key = f"{seed}:{index}"
    rng = random.Random(key)
    n = rng.randint(6, 40)
    rounds = rng.randint(3, min(11, n - 1))
    t = Tournament(f"crosscheck {key}", n, rounds, rng.choice(["white1", "black1"]))
    style = draw_style(rng)
    gone = {}
    if style.withdraw:
        gone[rng.randrange(n)] = rng.randint(2, rounds)
    passed = failed = 0
    trf_path = work / f"t{index:05d}.trf"
    for rnd in range(1, rounds + 1):
        absent = absences(rng, t, style, rnd, gone)
        for i, e in absent.items():
            t.history[i].append(e)
        trf = t.trf()
        trf_path.write_text(trf, encoding="ascii")
        ours = pair_hakem(hakem, trf_path)
        if rnd >= 2:
            theirs = pair_py4swiss(trf_path)
            same = (
                isinstance(ours, Pairing) and isinstance(theirs, Pairing) and ours == theirs
            ) or (ours == NO_PAIRING and theirs == NO_PAIRING)
            if same:
                passed += 1
            else:
                failed += 1
                diffs.append(Diff(index, key, rnd, n, trf, ours, theirs))
                log(f"tournament {index} (seed {key}, {n} players) round {rnd}: differs")
        if not isinstance(ours, Pairing):
            if rnd == 1 or isinstance(ours, str) and ours.startswith("ERROR"):
                log(f"tournament {index} round {rnd}: hakem gave {ours}")
            break
        entries: dict[int, Entry] = {}
        for w, b in sorted(ours.boards):
            rw, rb = game_result(rng, style, w, b)
            entries[w - 1] = Entry(b, "w", rw)
            entries[b - 1] = Entry(w, "b", rb)
        if ours.bye:
            entries[ours.bye - 1] = Entry(0, "-", "U")
        for i in range(n):
            if i in absent:
                continue
            if i not in entries:
                raise SystemExit(f"tournament {index} round {rnd}: hakem left player {i + 1} out")
            t.history[i].append(entries[i])
    return passed, failed


# --------------------------------------------------------------------------------------------


def find_hakem(given: str | None) -> str | None:
    if given:
        return given
    if os.environ.get("HAKEM"):
        return os.environ["HAKEM"]
    root = Path(__file__).resolve().parents[2]
    for profile in ("debug", "release"):
        p = root / "target" / profile / "hakem"
        if p.exists():
            return str(p)
    return shutil.which("hakem")


def describe(d: Diff) -> str:
    out = [
        f"--- tournament {d.tournament} (seed {d.seed}), {d.players} players, round {d.round}"
        + (f", TRF kept in {d.path}" if d.path else "")
    ]
    if isinstance(d.hakem, Pairing) and isinstance(d.py4swiss, Pairing):
        only_h = sorted(d.hakem.boards - d.py4swiss.boards)
        only_p = sorted(d.py4swiss.boards - d.hakem.boards)
        out.append(f"  boards only hakem:    {' '.join(f'{w}-{b}' for w, b in only_h) or '-'}")
        out.append(f"  boards only py4swiss: {' '.join(f'{w}-{b}' for w, b in only_p) or '-'}")
        if d.hakem.bye != d.py4swiss.bye:
            out.append(f"  bye: hakem {d.hakem.bye or 'none'}, py4swiss {d.py4swiss.bye or 'none'}")
    out.append(f"  hakem:    {d.hakem.text() if isinstance(d.hakem, Pairing) else d.hakem}")
    out.append(f"  py4swiss: {d.py4swiss.text() if isinstance(d.py4swiss, Pairing) else d.py4swiss}")
    out.append("  TRF:")
    out.extend("    " + ln for ln in d.trf.splitlines())
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--tournaments", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2017)
    ap.add_argument("--only", type=int, help="play only tournament number ONLY of the seed")
    ap.add_argument("--hakem", help="the hakem binary (default: $HAKEM, target/debug, PATH)")
    ap.add_argument("--show", type=int, default=3, help="differences printed in detail")
    ap.add_argument("--keep", type=Path, help="write the TRF of every differing round here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if DutchEngine is None:
        print("py4swiss is not installed (python3 -m pip install py4swiss)", file=sys.stderr)
        return 2
    hakem = find_hakem(args.hakem)
    if not hakem:
        print("no hakem binary: cargo build -p hakem-cli, or --hakem PATH", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        if args.verbose:
            print(msg, file=sys.stderr)

    indices = [args.only] if args.only is not None else range(args.tournaments)
    diffs: list[Diff] = []
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="py4swiss-crosscheck-") as tmp:
        for i in indices:
            p, f = play(i, args.seed, hakem, Path(tmp), diffs, log)
            passed += p
            failed += f
    if args.keep and diffs:
        args.keep.mkdir(parents=True, exist_ok=True)
        for d in diffs:
            d.path = args.keep / f"seed{d.seed.replace(':', '_')}_r{d.round:02d}.trf"
            d.path.write_text(d.trf, encoding="ascii")
    tours = len(indices)
    print(
        f"{passed} passed, {failed} failed "
        f"(rounds 2+ of {tours} tournaments, seed {args.seed}; py4swiss Dutch vs hakem dutch2017)"
    )
    if diffs:
        tset = sorted({d.tournament for d in diffs})
        print(f"differing tournaments: {' '.join(map(str, tset))}")
        print(f"differing rounds: {' '.join(f'{d.tournament}:{d.round}' for d in diffs)}")
        for d in diffs[: args.show]:
            print(describe(d))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

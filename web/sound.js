// Sounds of a match, off until the reader turns them on (kept in this browser): a move, the
// clock running low, a set's end. Tones made on the spot (Web Audio), no files to load. The
// last sound played is marked on the page (`data-sound` on <body>), which the tests read.

const KEY = "hakem.sounds";

const TONES = {
  move: [[660, 0.06]],
  low: [
    [440, 0.08],
    [440, 0.08],
  ],
  end: [
    [523, 0.1],
    [784, 0.18],
  ],
  ready: [
    [587, 0.1],
    [880, 0.1],
    [1175, 0.16],
  ],
};

let context = null;

export function soundsOn() {
  return localStorage.getItem(KEY) === "1";
}

/** Turns sounds on or off; called from the reader's click, which lets the page make sound. */
export function setSounds(on) {
  localStorage.setItem(KEY, on ? "1" : "0");
  if (on) audio();
}

/** The audio context, woken if the browser put it to sleep (it waits for a click first). */
function audio() {
  try {
    context ??= new AudioContext();
    if (context.state === "suspended") context.resume().catch(() => {});
  } catch {
    context = null;
  }
  return context;
}

/** Plays `kind` (`move`, `low`, `end`) if sounds are on. */
export function play(kind) {
  if (!soundsOn() || !TONES[kind]) return;
  document.body.dataset.sound = kind;
  const context = audio();
  if (!context) return;
  try {
    let at = context.currentTime;
    for (const [hz, seconds] of TONES[kind]) {
      const osc = context.createOscillator();
      const gain = context.createGain();
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.15, at);
      gain.gain.exponentialRampToValueAtTime(0.001, at + seconds);
      osc.connect(gain).connect(context.destination);
      osc.start(at);
      osc.stop(at + seconds);
      at += seconds + 0.04;
    }
  } catch {
    // No audio here (a browser without Web Audio): the page works without it.
  }
}

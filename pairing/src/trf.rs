//! TRF(x): the FIDE tournament report format (TRF-16) with the `XXR`/`XXC` extensions that
//! pairing engines read. Reading is column based, as the format is defined; every malformed line
//! gives an error naming its line number.

use std::fmt;

use crate::{Colour, Player, ResultCode, RoundEntry, Tournament};

/// A TRF reading error, with the 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TrfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TRF line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TrfError {}

fn err(line: usize, message: impl Into<String>) -> TrfError {
    TrfError {
        line,
        message: message.into(),
    }
}

/// 1-based inclusive column slice of a line; short lines give what is there.
fn cols(chars: &[char], from: usize, to: usize) -> String {
    let a = (from - 1).min(chars.len());
    let b = to.min(chars.len());
    chars[a..b].iter().collect()
}

fn parse_points(s: &str, line: usize) -> Result<u32, TrfError> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(0);
    }
    // Points are kept in half points so that sums stay exact.
    let v: f64 = t
        .parse()
        .map_err(|_| err(line, format!("bad score `{t}`")))?;
    let halves = v * 2.0;
    if !(0.0..=100000.0).contains(&halves) || halves.fract() != 0.0 {
        return Err(err(line, format!("bad score `{t}`")));
    }
    Ok(halves as u32)
}

fn parse_entry(s: &str, line: usize, round: usize) -> Result<Option<RoundEntry>, TrfError> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    let c: Vec<char> = s.chars().collect();
    let opp_s = cols(&c, 1, 4);
    let colour_c = c.get(5).copied().unwrap_or(' ');
    let res_c = c.get(7).copied().unwrap_or(' ');
    let opp_t = opp_s.trim();
    let opp: u32 = if opp_t.is_empty() {
        0
    } else {
        opp_t
            .parse()
            .map_err(|_| err(line, format!("round {round}: bad opponent `{opp_t}`")))?
    };
    let colour = match colour_c {
        'w' | 'W' => Some(Colour::White),
        'b' | 'B' => Some(Colour::Black),
        '-' | ' ' => None,
        other => return Err(err(line, format!("round {round}: bad colour `{other}`"))),
    };
    let result = match (res_c, opp) {
        ('1', _) | ('W', _) => ResultCode::Win,
        ('=', _) | ('D', _) => ResultCode::Draw,
        ('0', _) | ('L', _) => ResultCode::Loss,
        ('+', _) => ResultCode::ForfeitWin,
        ('-', 0) => ResultCode::Absent,
        ('-', _) => ResultCode::ForfeitLoss,
        ('U', _) => ResultCode::Pab,
        ('F', _) => ResultCode::FullBye,
        ('H', _) => ResultCode::HalfBye,
        ('Z', _) => ResultCode::ZeroBye,
        (' ', 0) => ResultCode::Absent,
        (other, _) => return Err(err(line, format!("round {round}: bad result `{other}`"))),
    };
    if result.is_game() && (opp == 0 || colour.is_none()) {
        return Err(err(
            line,
            format!("round {round}: a game needs an opponent and a colour"),
        ));
    }
    if !result.has_opponent() && opp != 0 && result != ResultCode::Absent {
        return Err(err(line, format!("round {round}: a bye has no opponent")));
    }
    Ok(Some(RoundEntry {
        opponent: if opp == 0 { None } else { Some(opp) },
        colour,
        result,
    }))
}

/// Reads a TRF(x) text.
pub fn parse(text: &str) -> Result<Tournament, TrfError> {
    let mut t = Tournament::default();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let code = cols(&chars, 1, 3);
        match code.as_str() {
            "001" => t.players.push(parse_player(&chars, ln)?),
            "012" => t.name = cols(&chars, 5, chars.len()).trim().to_string(),
            "XXR" => {
                let v = cols(&chars, 4, chars.len());
                let n: u32 = v
                    .trim()
                    .parse()
                    .map_err(|_| err(ln, format!("bad XXR `{}`", v.trim())))?;
                t.total_rounds = Some(n);
            }
            "BBU" => {
                let v = cols(&chars, 4, chars.len());
                let points: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| err(ln, format!("bad BBU `{}`", v.trim())))?;
                let halves = points * 2.0;
                if !(0.0..=2.0).contains(&halves) || halves.fract() != 0.0 {
                    return Err(err(ln, format!("BBU `{}`: 0, 0.5 or 1", v.trim())));
                }
                t.pab_halves = Some(halves as u32);
            }
            "XXC" => {
                let v = cols(&chars, 4, chars.len()).trim().to_ascii_lowercase();
                let first = v.split_whitespace().next().unwrap_or("");
                t.initial_colour = match first {
                    "white1" => Some(Colour::White),
                    "black1" => Some(Colour::Black),
                    // rank/other XXC options are not used here; keep the line.
                    _ => {
                        t.other_lines.push(line.to_string());
                        t.initial_colour
                    }
                };
            }
            _ => t.other_lines.push(line.to_string()),
        }
    }
    let n = t.players.len();
    for (idx, p) in t.players.iter().enumerate() {
        if p.id as usize != idx + 1 {
            // Pairing numbers must be 1..N in order; sort first if not.
            let mut ids: Vec<u32> = t.players.iter().map(|p| p.id).collect();
            ids.sort_unstable();
            if ids.iter().enumerate().all(|(i, &id)| id as usize == i + 1) {
                break;
            }
            return Err(err(
                p.line,
                format!("pairing numbers must be 1..{n} without gaps"),
            ));
        }
    }
    t.players.sort_by_key(|p| p.id);
    for p in &t.players {
        for (r, e) in p.rounds.iter().enumerate() {
            if let Some(e) = e {
                if let Some(o) = e.opponent {
                    if o == 0 || o as usize > n {
                        return Err(err(
                            p.line,
                            format!("round {}: opponent {o} does not exist", r + 1),
                        ));
                    }
                    if o == p.id {
                        return Err(err(
                            p.line,
                            format!("round {}: player paired with itself", r + 1),
                        ));
                    }
                    let oe = t.players[o as usize - 1].rounds.get(r).copied().flatten();
                    if oe.and_then(|x| x.opponent) != Some(p.id) {
                        return Err(err(
                            p.line,
                            format!("round {}: opponent {o} does not list {}", r + 1, p.id),
                        ));
                    }
                }
            }
        }
    }
    Ok(t)
}

fn parse_player(c: &[char], ln: usize) -> Result<Player, TrfError> {
    let id_s = cols(c, 5, 8);
    let id: u32 = id_s
        .trim()
        .parse()
        .map_err(|_| err(ln, format!("bad pairing number `{}`", id_s.trim())))?;
    if id == 0 {
        return Err(err(ln, "pairing number 0"));
    }
    let rating_s = cols(c, 49, 52);
    let rating = rating_s.trim().parse().ok();
    let points = parse_points(&cols(c, 81, 84), ln)?;
    let mut rounds = Vec::new();
    let mut start = 92;
    while start <= c.len() {
        let s = cols(c, start, start + 7);
        rounds.push(parse_entry(&s, ln, rounds.len() + 1)?);
        start += 10;
    }
    while matches!(rounds.last(), Some(None)) {
        rounds.pop();
    }
    Ok(Player {
        id,
        name: cols(c, 15, 47).trim().to_string(),
        sex: cols(c, 10, 10).trim().to_string(),
        title: cols(c, 11, 13).trim().to_string(),
        rating,
        federation: cols(c, 54, 56).trim().to_string(),
        fide_id: cols(c, 58, 68).trim().to_string(),
        birth: cols(c, 70, 79).trim().to_string(),
        points,
        rank: cols(c, 86, 89).trim().parse().ok(),
        rounds,
        line: ln,
    })
}

fn put(buf: &mut Vec<char>, from: usize, s: &str, right: bool, width: usize) {
    let s: Vec<char> = s.chars().take(width).collect();
    let off = if right { width - s.len() } else { 0 };
    let need = from - 1 + width;
    if buf.len() < need {
        buf.resize(need, ' ');
    }
    for (i, ch) in s.iter().enumerate() {
        buf[from - 1 + off + i] = *ch;
    }
}

/// Formats half points as TRF does (`3.5`).
pub fn fmt_points(halves: u32) -> String {
    format!("{}.{}", halves / 2, if halves % 2 == 1 { 5 } else { 0 })
}

/// Writes a tournament as TRF(x) text (LF line ends).
pub fn write(t: &Tournament) -> String {
    let mut out = String::new();
    if !t.name.is_empty() {
        out.push_str(&format!("012 {}\n", t.name));
    }
    for l in &t.other_lines {
        out.push_str(l);
        out.push('\n');
    }
    if let Some(r) = t.total_rounds {
        out.push_str(&format!("XXR {r}\n"));
    }
    if let Some(h) = t.pab_halves {
        // The value in columns 5-8, as bbpPairings reads its BBx lines.
        out.push_str(&format!("BBU {:>4}\n", fmt_points(h)));
    }
    if let Some(c) = t.initial_colour {
        out.push_str(match c {
            Colour::White => "XXC white1\n",
            Colour::Black => "XXC black1\n",
        });
    }
    for p in &t.players {
        let mut b: Vec<char> = Vec::new();
        put(&mut b, 1, "001", false, 3);
        put(&mut b, 5, &p.id.to_string(), true, 4);
        put(&mut b, 10, &p.sex, false, 1);
        put(&mut b, 11, &p.title, true, 3);
        put(&mut b, 15, &p.name, false, 33);
        if let Some(r) = p.rating {
            put(&mut b, 49, &r.to_string(), true, 4);
        }
        put(&mut b, 54, &p.federation, false, 3);
        put(&mut b, 58, &p.fide_id, true, 11);
        put(&mut b, 70, &p.birth, false, 10);
        put(&mut b, 81, &fmt_points(p.points), true, 4);
        if let Some(r) = p.rank {
            put(&mut b, 86, &r.to_string(), true, 4);
        }
        for (i, e) in p.rounds.iter().enumerate() {
            let start = 92 + 10 * i;
            let s = match e {
                None => "        ".to_string(),
                Some(e) => format_entry(e),
            };
            put(&mut b, start, &s, false, 8);
        }
        let line: String = b.into_iter().collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn format_entry(e: &RoundEntry) -> String {
    let opp = e.opponent.unwrap_or(0);
    let col = match e.colour {
        Some(Colour::White) => 'w',
        Some(Colour::Black) => 'b',
        None => '-',
    };
    let res = match e.result {
        ResultCode::Win => '1',
        ResultCode::Draw => '=',
        ResultCode::Loss => '0',
        ResultCode::ForfeitWin => '+',
        ResultCode::ForfeitLoss | ResultCode::Absent => '-',
        ResultCode::Pab => 'U',
        ResultCode::FullBye => 'F',
        ResultCode::HalfBye => 'H',
        ResultCode::ZeroBye => 'Z',
    };
    if opp == 0 {
        format!("0000 {col} {res}")
    } else {
        format!("{opp:4} {col} {res}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let text = "012 t\nXXR 3\nXXC white1\n\
001    1      Test0001 Player0001               2051                             2.0    2     3 w 1     5 b 1     2 w 0\n\
001    2      Test0002 Player0002               2016                             3.0    1     4 b 1     3 w 1     1 b 1\n\
001    3      Test0003 Player0003               1986                             0.0    5     1 b 0     2 b 0  0000 - -\n\
001    4      Test0004 Player0004               1844                             2.0    3     2 w 0  0000 - U     5 b 1\n\
001    5      Test0005 Player0005               1801                             1.0    4  0000 - U     1 w 0     4 w 0\n";
        let t = parse(text).unwrap();
        assert_eq!(t.players.len(), 5);
        assert_eq!(t.players[3].rounds[1].unwrap().result, ResultCode::Pab);
        assert_eq!(t.players[2].rounds[2].unwrap().result, ResultCode::Absent);
        let w = write(&t);
        let t2 = parse(&w).unwrap();
        assert_eq!(write(&t2), w);
        assert_eq!(t.players[4].rounds, t2.players[4].rounds);
        let want = "001    4      Test0004 Player0004               1844                             2.0    3     2 w 0  0000 - U     5 b 1";
        assert!(w.contains(want), "{w}");
    }

    #[test]
    fn the_points_of_the_pairing_allocated_bye_are_read_and_written() {
        let text = "012 t\nXXR 2\nBBU 0.5\n\
001    1      A                                                                  0.5    1  0000 - U\n\
001    2      B                                                                  0.0    2     3 w 0\n\
001    3      C                                                                  1.0    1     2 b 1\n";
        let t = parse(text).unwrap();
        assert_eq!(t.pab(), 1);
        assert_eq!(t.points_after(0, 1, t.pab()), 1);
        assert!(write(&t).contains("\nBBU  0.5\n"));
        let plain = parse("XXR 2\n").unwrap();
        assert_eq!(plain.pab(), 2);
        assert!(!write(&plain).contains("BBU"));
        assert_eq!(parse("BBU 2\n").unwrap_err().line, 1);
        assert_eq!(parse("BBU half\n").unwrap_err().line, 1);
        let st = crate::standings(&t, crate::Edition::E2026, &crate::Tiebreak::DEFAULT_ORDER);
        let a = st.iter().find(|s| s.id == 1).unwrap();
        assert_eq!(a.points, 1, "the bye is worth half a point here");
    }

    #[test]
    fn errors_carry_line_numbers() {
        let e = parse("012 x\n001    x  bad\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("XXR zz\n").unwrap_err();
        assert_eq!(e.line, 1);
        let long = format!("001    1{}1.0    1     9 w 1\n", " ".repeat(72));
        let e = parse(&long).unwrap_err();
        assert_eq!(e.line, 1);
        // Odd non-ASCII input must not panic.
        let _ = parse("001 ééééééééééééééééééééé 🙂🙂🙂\n");
        let _ = parse("001");
    }
}

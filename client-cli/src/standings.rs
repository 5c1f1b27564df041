//! The standings as the terminal prints them, for `hakem tournament standings` on a TRF file
//! and on a live tournament alike.

/// A line of the standings, whether from a TRF file or a live tournament.
pub struct StandingRow {
    pub id: u32,
    pub rank: u32,
    pub name: String,
    pub points: f64,
    /// By code, in the order to print.
    pub tiebreaks: Vec<(String, f64)>,
}

/// A number as JSON writes it, whole numbers without a fraction.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        serde_json::Value::from(x).to_string()
    }
}

/// The standings table, or with `json` one object per line:
/// `{"id":N,"rank":R,"points":P,"tiebreaks":{"BH-C1":x,...}}`.
pub fn print_standings(rows: &[StandingRow], json: bool) {
    if json {
        for s in rows {
            // Written by hand to keep the documented key order.
            let tiebreaks: Vec<String> = s
                .tiebreaks
                .iter()
                .map(|(code, value)| {
                    format!("{}:{}", serde_json::Value::from(code.as_str()), num(*value))
                })
                .collect();
            println_or_quit!(
                "{{\"id\":{},\"rank\":{},\"points\":{},\"tiebreaks\":{{{}}}}}",
                s.id,
                s.rank,
                num(s.points),
                tiebreaks.join(",")
            );
        }
        return;
    }
    let mut header = format!("{:>4} {:>4}  {:<32} {:>5}", "rank", "id", "name", "pts");
    for (code, _) in rows.first().map(|r| r.tiebreaks.as_slice()).unwrap_or(&[]) {
        header.push_str(&format!(" {code:>6}"));
    }
    println_or_quit!("{header}");
    for s in rows {
        let mut line = format!(
            "{:>4} {:>4}  {:<32} {:>5.1}",
            s.rank, s.id, s.name, s.points
        );
        for (code, value) in &s.tiebreaks {
            let decimals = match code.as_str() {
                "SB" => 2,
                "DE" | "WIN" => 0,
                _ => 1,
            };
            line.push_str(&format!(" {value:>6.decimals$}"));
        }
        println_or_quit!("{line}");
    }
}

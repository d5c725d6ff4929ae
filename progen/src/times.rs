//! Times in generated programs: a `Time` read from one of a few RFC 3339 texts (offsets,
//! fractions, the ends of years 0000 and 9999, an impossible date) and a `Duration` literal of
//! every unit, combined with `+` and `-`, compared, scaled, and printed in both text forms. The
//! clock is never read, so every backend prints the same; the ends of the range make some
//! programs trap with `time out of range`, which every backend must do alike.

use arbitrary::Result;

use super::*;

/// The texts a `Time` is read from: ordinary ones in several offsets and precisions, the first
/// and last instants a `Time` holds, the microsecond before 1970, and texts that are not times.
const TIMES: &[&str] = &[
    "2026-12-05T04:23:34Z",
    "2026-12-05T05:23:34.5+01:00",
    "1969-12-31T23:59:59.999999Z",
    "2000-02-29T12:00:00.000001-08:00",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999Z",
    "2026-02-30T00:00:00Z",
    "yesterday",
];

/// Duration literals of every unit, and zero.
const DURATIONS: &[&str] = &["1us", "1500us", "250ms", "90s", "2m", "1h", "1d", "0s", "-5s"];

/// Texts a `Uuid` is read from: one UUID in several forms, another, and texts that are not one.
const UUIDS: &[&str] = &[
    "0192f0c2-5c3e-7b9a-8f00-5d1c2e3f4a5b",
    "0192F0C2-5C3E-7B9A-8F00-5D1C2E3F4A5B",
    "0192f0c25c3e7b9a8f005d1c2e3f4a5b",
    "00000000-0000-0000-0000-000000000000",
    "0192f0c2-5c3e-7b9a-8f00",
    "",
];

impl Gen<'_, '_> {
    /// `if let u = parse_uuid("…") { … } else { … }`: the canonical text, a comparison with
    /// another parsed UUID, and (never printed) a fresh one compared with it.
    pub(super) fn uuid_stmt(&mut self) -> Result<()> {
        let (a, b) = (*self.u.choose(UUIDS)?, *self.u.choose(UUIDS)?);
        let (u, v) = (self.fresh("u"), self.fresh("v"));
        self.line(&format!("if let {u} = parse_uuid(\"{a}\") {{"));
        self.indent += 1;
        self.line(&format!("print({u})"));
        self.line(&format!("print({u} == uuid_v7() || {u} == uuid_v4())"));
        self.line(&format!("if let {v} = parse_uuid(\"{b}\") {{ print({u} != {v}) }}"));
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.line("print(\"not a uuid\")");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// `if let t = parse_time("…") { … } else { print("not a time") }`, with a few operations on
    /// `t` and a duration printed inside.
    pub(super) fn time_stmt(&mut self) -> Result<()> {
        let text = *self.u.choose(TIMES)?;
        let (t, d) = (self.fresh("t"), self.fresh("d"));
        self.line(&format!("if let {t} = parse_time(\"{text}\") {{"));
        self.indent += 1;
        let duration = *self.u.choose(DURATIONS)?;
        self.line(&format!("let {d} = {duration}"));
        for _ in 0..self.u.int_in_range(1..=4)? {
            let k = *self.u.choose(&[1, 2, -3, 7, 1000])?;
            let line = match self.u.int_in_range(0..=9)? {
                0 => format!("print({t})"),
                1 => format!("print({t} + {d})"),
                2 => format!("print({t} - {d})"),
                3 => format!("print(({t} + {d}) - {t})"),
                4 => format!("print({t} < {t} + {d})"),
                5 => format!("print({d} * {k})"),
                6 => format!("print({d} / {k})"),
                7 => format!("print({t}.unix_ms())"),
                8 => format!("print({d}.ms() + {d}.micros())"),
                _ => format!("print(to_string({d}) + \" \" + to_string(-{d}))"),
            };
            self.line(&line);
        }
        self.indent -= 1;
        self.line("} else {");
        self.indent += 1;
        self.line("print(\"not a time\")");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }
}

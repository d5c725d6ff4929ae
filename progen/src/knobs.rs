//! The configuration in generated programs: a third of them declare `config Knobs` with a
//! default for each value (an `i64`, an `f64`, a `String`, a `bool` and a `Duration`, edge
//! literals among them), which expressions of the main file then read. The variables
//! (`PROGEN_LEVEL`, …) are named so that no environment sets them, so every backend reads the
//! defaults and prints the same.

use arbitrary::Result;

use super::*;

impl Gen<'_, '_> {
    /// `config Knobs { … }`, and the generator told that the main file may read it.
    pub(super) fn knobs_decl(&mut self) -> Result<String> {
        let level = *self.u.choose(&["0", "1", "-7", "1000", "9223372036854775807", "-9223372036854775808"])?;
        let ratio = *self.u.choose(&["0.5", "-2.25", "1e308", "0.0", "3"])?;
        let name = *self.u.choose(&["\"\"", "\"knob\"", "\"é 東\""])?;
        let on = *self.u.choose(&["true", "false"])?;
        let wait = *self.u.choose(&["250ms", "1500us", "2h", "-5s", "0s"])?;
        self.knobs = true;
        Ok(format!(
            "config Knobs {{\n    progen_level: i64 = {level}\n    progen_ratio: f64 = {ratio}\n    \
             progen_name: String = {name}\n    progen_on: bool = {on}\n    progen_wait: Duration = {wait}\n}}\n\n"
        ))
    }

    /// Now and then, a read of the value of type `ty` in the main file's expressions.
    pub(super) fn knob(&mut self, ty: Ty) -> Result<Option<String>> {
        if !self.knobs || self.body.file != File::Main || !self.u.ratio(1, 6)? {
            return Ok(None);
        }
        Ok(match ty {
            Ty::I64 => Some("Knobs.progen_level".into()),
            Ty::F64 => Some("Knobs.progen_ratio".into()),
            Ty::Bool => Some("Knobs.progen_on".into()),
            Ty::Str if self.u.ratio(1, 2)? => Some("Knobs.progen_name".into()),
            Ty::Str => Some("to_string(Knobs.progen_wait)".into()),
            _ => None,
        })
    }
}

//! Programs of two files: the main file and the module `lib` beside it, which then holds the
//! prelude (every item `pub`), some of the functions and maybe a test. The main file imports
//! it (`import lib`, `import lib.{…}` with a random choice of names, or both) and names each
//! item of `lib` unqualified where it imports it, or qualified (`lib.tap_i64(x)`, `lib.P { … }`,
//! `lib.Tok.End`, `: lib.Item`) at random; a `match` pattern names the enum only where it is
//! unqualified. A program's text holds all its files, each module after a [`MODULE_LINE`];
//! [`files`] splits it, and [`Files`] loads the modules from it for `nagi_high`.

use arbitrary::Result;

use super::*;

/// The line before the text of the module `lib` in a program's text.
pub const MODULE_LINE: &str = "// file: lib.nagi";

/// The main file's name in messages (an assertion's location, diagnostics).
const MAIN_FILE: &str = "main.nagi";

/// Where an item is written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum File {
    Main,
    Lib,
}

/// The files of a generated program: the main file's text, and each module's path (`lib`,
/// without `.nagi`) and text.
#[derive(Clone, Debug, Default)]
pub struct Files {
    pub main: String,
    pub modules: Vec<(String, String)>,
}

/// Splits a program's text into its files: every `// file: NAME.nagi` line starts one.
pub fn files(text: &str) -> Files {
    let mut files = Files::default();
    let mut current: Option<(String, String)> = None;
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.trim_end().strip_prefix("// file: ") {
            files.modules.extend(current.take());
            current = Some((name.trim_end_matches(".nagi").to_string(), String::new()));
        } else {
            match &mut current {
                Some((_, module)) => module.push_str(line),
                None => files.main.push_str(line),
            }
        }
    }
    files.modules.extend(current);
    files
}

impl nagi_high::modules::Loader for Files {
    fn load(&mut self, path: &str) -> std::result::Result<(String, String), String> {
        match self.modules.iter().find(|(p, _)| p == path) {
            Some((p, text)) => Ok((format!("{p}.nagi"), text.clone())),
            None => Err(format!("the program has no module `{path}`")),
        }
    }
}

/// Compiles a generated program (every file of its text) into a verified Low module called
/// `module_name`, whose `main` runs.
///
/// Errors: the diagnostics, rendered against the program's files.
pub fn compile(text: &str, module_name: &str) -> std::result::Result<nagi_low::Module, String> {
    let mut files = files(text);
    let main = std::mem::take(&mut files.main);
    nagi_high::compile_program(MAIN_FILE, &main, module_name, &mut files)
        .map_err(|(diagnostics, sources)| sources.render(&diagnostics))
}

/// Compiles a generated program as a test build (`nagic test`'s): its `main` runs the test
/// whose index `NAGI_TEST` gives; also returns how many tests there are.
///
/// Errors: the diagnostics, rendered against the program's files.
pub fn compile_tests(text: &str, module_name: &str) -> std::result::Result<(nagi_low::Module, usize), String> {
    let mut files = files(text);
    let main = std::mem::take(&mut files.main);
    match nagi_high::compile_tests(MAIN_FILE, &main, module_name, &mut files) {
        Ok((module, cases)) => Ok((module, cases.len())),
        Err((diagnostics, sources)) => Err(sources.render(&diagnostics)),
    }
}

impl Gen<'_, '_> {
    /// The names of `lib` the main file imports unqualified: none, all (the prelude's and the
    /// `pub` functions'), or about half.
    pub(super) fn choose_imports(&mut self) -> Result<Vec<String>> {
        let mut names: Vec<String> = prelude::items(&self.config).into_iter().map(String::from).collect();
        names.extend(self.funcs.iter().filter(|f| f.public).map(|f| f.name.clone()));
        Ok(match self.u.int_in_range(0..=3)? {
            0 => Vec::new(),
            1 => names,
            _ => {
                let mut some = Vec::new();
                for name in names {
                    if self.u.arbitrary()? {
                        some.push(name);
                    }
                }
                some
            }
        })
    }

    /// The main file's imports of `lib`: `import lib` (needed when nothing is imported by
    /// name), `import lib.{…}`, or both.
    pub(super) fn import_lines(&mut self, imports: &[String]) -> Result<String> {
        let mut text = String::new();
        if imports.is_empty() || self.u.ratio(1, 3)? {
            text.push_str("import lib\n");
        }
        if !imports.is_empty() {
            text.push_str(&format!("import lib.{{{}}}\n", imports.join(", ")));
        }
        text.push('\n');
        Ok(text)
    }

    /// Whether the body being written may name the item `name` of the prelude (or of `lib`)
    /// unqualified: always, unless it is in the main file of a program with a module that does
    /// not import it.
    pub(super) fn names_unqualified(&self, name: &str) -> bool {
        match &self.imports {
            Some(imports) if self.body.file == File::Main => imports.iter().any(|i| i == name),
            _ => true,
        }
    }

    /// How the body being written names the prelude's item (or a function of `lib`) `name`:
    /// as it is, or in the main file of a program with a module `lib.name` where it must be
    /// qualified, and at random where it may be either.
    pub(super) fn q(&mut self, name: &str) -> Result<String> {
        if self.imports.is_none() || self.body.file == File::Lib {
            return Ok(name.to_string());
        }
        if self.names_unqualified(name) && self.u.ratio(3, 4)? {
            Ok(name.to_string())
        } else {
            Ok(format!("lib.{name}"))
        }
    }

    /// A type as the body being written names it (`Tok` or `lib.Tok`).
    pub(super) fn ty_text(&mut self, ty: Ty) -> Result<String> {
        match ty {
            Ty::P | Ty::Tok | Ty::Light | Ty::Item => self.q(ty.name()),
            _ => Ok(ty.name().to_string()),
        }
    }
}

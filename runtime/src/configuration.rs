//! A program's configuration (High Nagi's `config` declarations, Low's `config` lines and
//! `config.*` rows; docs/language.md, "Configuration"): each value bound once at start from its
//! environment variable, then read anywhere. The rules are written once here, for the Rust path,
//! the LLVM path (`cabi::configuration`), the JIT and the interpreter (the driver binds for
//! those).
//!
//! A program declares its values ([`declare`]) before anything else runs; the entry of a service
//! or a program then binds them ([`bind_or_exit`]): a required value that is missing, or a value
//! that is not of its type, stops the process with exit status 2 before it listens, naming the
//! variable and what was expected. A `secret` value never appears in an error, in `--help` or in
//! the log: errors about it name the variable only. In a test of `nagic test` (`NAGI_TEST` set),
//! a required value that is not set stops only the tests that read it, with the same message as
//! a trap, so that tests which never reach a service's secrets need none.

use std::sync::OnceLock;

/// The type of a configuration value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigKind {
    /// A `String`, taken as it is.
    Str,
    /// An `i64`, in decimal (`strings::parse_i64`'s rule).
    I64,
    /// An `f64` (`strings::parse_f64`'s rule).
    F64,
    /// A `bool`: `true` or `false`.
    Bool,
    /// A `Duration`, written as its literal (`250ms`, `5s`, `1h`).
    Duration,
}

impl ConfigKind {
    /// The type's name, for messages and `--help`.
    pub fn name(self) -> &'static str {
        match self {
            ConfigKind::Str => "String",
            ConfigKind::I64 => "i64",
            ConfigKind::F64 => "f64",
            ConfigKind::Bool => "bool",
            ConfigKind::Duration => "Duration",
        }
    }

    /// What a value of the type is, for the error of one that is not (`an i64`).
    fn expected(self) -> &'static str {
        match self {
            ConfigKind::Str => "a String",
            ConfigKind::I64 => "an i64 in decimal",
            ConfigKind::F64 => "an f64",
            ConfigKind::Bool => "true or false",
            ConfigKind::Duration => "a duration such as 250ms, 5s or 1h",
        }
    }

    /// The value `text` is, or `None` when it is not one of this type.
    fn parse(self, text: &str) -> Option<Value> {
        Some(match self {
            ConfigKind::Str => Value::Str(text.to_owned()),
            ConfigKind::I64 => Value::I64(crate::strings::parse_i64(text)?),
            ConfigKind::F64 => Value::F64(crate::strings::parse_f64(text)?),
            ConfigKind::Bool => Value::Bool(match text {
                "true" => true,
                "false" => false,
                _ => return None,
            }),
            ConfigKind::Duration => Value::I64(crate::time::parse_duration(text)?),
        })
    }
}

/// One declared value: its name in the program, its environment variable, its type, whether
/// it is a secret, and its default (as text of its type; none for a required value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigDecl {
    /// The field's name (`api_key`).
    pub name: &'static str,
    /// The environment variable it is read from (`API_KEY`).
    pub env: &'static str,
    /// Its type.
    pub kind: ConfigKind,
    /// Whether the value is a secret, never shown.
    pub secret: bool,
    /// The value when the variable is unset, as text; `None` for a required value.
    pub default: Option<&'static str>,
}

/// A bound value. A `Duration` is held as its microseconds.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    I64(i64),
    F64(f64),
    Bool(bool),
    /// A required value a test found unset: reading it traps with this message.
    Unset(String),
}

static DECLARED: OnceLock<&'static [ConfigDecl]> = OnceLock::new();
static VALUES: OnceLock<Vec<Value>> = OnceLock::new();

/// Declares the program's configuration; the first declaration of a process stands.
pub fn declare(decls: &'static [ConfigDecl]) {
    let _ = DECLARED.set(decls);
}

/// The declared configuration (empty before [`declare`]).
pub fn declared() -> &'static [ConfigDecl] {
    DECLARED.get().copied().unwrap_or(&[])
}

/// Binds every declared value from `lookup` (the environment, for [`bind_or_exit`]); the first
/// problem is the error: a required value unset (unless `in_test`, which leaves it to trap when
/// read), or a value that is not of its type (a secret's value is never repeated).
pub fn bind_with(lookup: impl Fn(&str) -> Option<String>, in_test: bool) -> Result<(), String> {
    let mut values = Vec::new();
    for decl in declared() {
        let what = format!("{} ({}{})", decl.env, if decl.secret { "secret " } else { "" }, decl.kind.name());
        let text = match (lookup(decl.env), decl.default) {
            (Some(text), _) => text,
            (None, Some(default)) => default.to_owned(),
            (None, None) => {
                let message =
                    format!("configuration: {what} is required but not set; set the environment variable {}", decl.env);
                if in_test {
                    values.push(Value::Unset(message));
                    continue;
                }
                return Err(message);
            }
        };
        let Some(value) = decl.kind.parse(&text) else {
            let shown = if decl.secret { String::new() } else { format!(", not {text:?}") };
            return Err(format!("configuration: {what} must be {}{shown}", decl.kind.expected()));
        };
        values.push(value);
    }
    // Bound once; a second binding (a test build's own entry after the driver's) keeps the first.
    let _ = VALUES.set(values);
    Ok(())
}

/// Binds the declared values from the environment, or stops the process with the reason and exit
/// status 2: what a service does before it listens and a program before `main` runs.
pub fn bind_or_exit() {
    let in_test = std::env::var("NAGI_TEST").is_ok_and(|n| n.parse::<i64>().is_ok());
    if let Err(message) = bind_with(|name| std::env::var(name).ok(), in_test) {
        eprintln!("nagi: {message}");
        std::process::exit(2);
    }
}

/// The lines `--help` adds for the declared values: each variable, its type, and whether it is
/// required or its default (a secret's default is never shown, nor is any value).
pub fn help() -> Option<String> {
    let decls = declared();
    if decls.is_empty() {
        return None;
    }
    let mut text = String::from("Configuration (environment variables):\n");
    for decl in decls {
        let ty = if decl.secret { format!("secret {}", decl.kind.name()) } else { decl.kind.name().to_owned() };
        let default = match decl.default {
            None => "required".to_owned(),
            Some(_) if decl.secret => "default ***".to_owned(),
            // A duration as its literal reads best (`5s`, not the compiler's `5000000us`).
            Some(default) if decl.kind == ConfigKind::Duration => {
                let shown =
                    crate::time::parse_duration(default).map_or(default.to_owned(), crate::time::format_duration);
                format!("default {shown}")
            }
            Some(default) => format!("default {default}"),
        };
        text.push_str(&format!("  {:<24} {ty}, {default} ({})\n", decl.env, decl.name));
    }
    Some(text)
}

/// Value `index`, which the compiler made a read of a declared value of the right type.
fn value(index: i64) -> &'static Value {
    let values = VALUES.get().map(Vec::as_slice).unwrap_or(&[]);
    let value = usize::try_from(index)
        .ok()
        .and_then(|i| values.get(i))
        .unwrap_or_else(|| crate::trap::trap(&format!("configuration value #{index} is not bound")));
    if let Value::Unset(message) = value {
        crate::trap::trap(message);
    }
    value
}

/// `config.str`: a `String` value (a copy).
pub fn str(index: i64) -> String {
    match value(index) {
        Value::Str(s) => s.clone(),
        _ => crate::trap::trap(&format!("configuration value #{index} is not a String")),
    }
}

/// `config.i64` and `config.duration` (its microseconds).
pub fn int(index: i64) -> i64 {
    match value(index) {
        Value::I64(v) => *v,
        _ => crate::trap::trap(&format!("configuration value #{index} is not an integer")),
    }
}

/// `config.f64`.
pub fn float(index: i64) -> f64 {
    match value(index) {
        Value::F64(v) => *v,
        _ => crate::trap::trap(&format!("configuration value #{index} is not an f64")),
    }
}

/// `config.bool`.
pub fn boolean(index: i64) -> bool {
    match value(index) {
        Value::Bool(v) => *v,
        _ => crate::trap::trap(&format!("configuration value #{index} is not a bool")),
    }
}

/// `config.duration` on the Rust path.
pub fn duration(index: i64) -> crate::time::Duration {
    crate::time::Duration::from_micros(int(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    static DECLS: &[ConfigDecl] = &[
        ConfigDecl { name: "mail_url", env: "MAIL_URL", kind: ConfigKind::Str, secret: false, default: None },
        ConfigDecl { name: "api_key", env: "API_KEY", kind: ConfigKind::Str, secret: true, default: None },
        ConfigDecl {
            name: "page_limit",
            env: "PAGE_LIMIT",
            kind: ConfigKind::I64,
            secret: false,
            default: Some("100"),
        },
        ConfigDecl { name: "timeout", env: "TIMEOUT", kind: ConfigKind::Duration, secret: false, default: Some("5s") },
    ];

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn values_bind_from_the_environment_or_their_defaults_and_errors_name_the_variable() {
        declare(DECLS);
        let missing = bind_with(env(&[("MAIL_URL", "http://x")]), false).unwrap_err();
        assert_eq!(
            missing,
            "configuration: API_KEY (secret String) is required but not set; set the environment variable API_KEY"
        );
        let bad = bind_with(env(&[("MAIL_URL", "m"), ("API_KEY", "k"), ("PAGE_LIMIT", "lots")]), false).unwrap_err();
        assert_eq!(bad, "configuration: PAGE_LIMIT (i64) must be an i64 in decimal, not \"lots\"");
        bind_with(env(&[("MAIL_URL", "http://mail"), ("API_KEY", "s3cret"), ("TIMEOUT", "250ms")]), false).unwrap();
        assert_eq!((str(0), str(1), int(2), int(3)), ("http://mail".into(), "s3cret".into(), 100, 250_000));
        let help = help().unwrap();
        assert!(help.contains("API_KEY") && help.contains("secret String, required"), "{help}");
        assert!(help.contains("PAGE_LIMIT") && help.contains("i64, default 100"), "{help}");
        assert!(!help.contains("s3cret"));
    }
}

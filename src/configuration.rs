//! The configuration of a program run in `nagic`'s own process (`run --backend=jit` and
//! `--backend=interp`): the module's `config` lines declared to the runtime this driver links and
//! bound from the environment, as a compiled program's entry binds them; a missing or malformed
//! value stops `nagic` with exit status 2, naming the variable.

use nagi_low::{Module, Type};
use nagi_runtime::configuration::{self, ConfigDecl, ConfigKind};

/// Declares and binds `module`'s configuration (nothing for a module without one).
pub(crate) fn bind(module: &Module) {
    if module.configs.is_empty() {
        return;
    }
    // Declared once per process, for as long as it runs, as the compiled program's are.
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let decls: Vec<ConfigDecl> = module
        .configs
        .iter()
        .map(|c| ConfigDecl {
            name: leak(&c.name),
            env: leak(&c.env),
            kind: match c.ty {
                Type::I64 => ConfigKind::I64,
                Type::F64 => ConfigKind::F64,
                Type::Bool => ConfigKind::Bool,
                Type::Duration => ConfigKind::Duration,
                _ => ConfigKind::Str,
            },
            secret: c.secret,
            default: c.default.as_deref().map(leak),
        })
        .collect();
    configuration::declare(Vec::leak(decls));
    configuration::bind_or_exit();
}

//! The program's configuration in the C `main`: the module's `config` lines as a constant array
//! of `ConfigDesc` handed to `nagi_rt_config_declare` before the runtime starts the program or
//! the service, which then binds them from the environment (docs/c-abi.md, "Configuration").

use nagi_low::Type;

use crate::constants::{array_global, int, struct_of, text};
use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error};

/// The kind code of a value's type, as `nagi_abi::config_kind` numbers it.
fn kind(ty: &Type) -> Result<u64, Error> {
    use nagi_abi::config_kind as k;
    Ok(match ty {
        Type::String => k::STR,
        Type::I64 => k::I64,
        Type::F64 => k::F64,
        Type::Bool => k::BOOL,
        Type::Duration => k::DURATION,
        other => return Err(Error::internal(format!("a configuration value of type {other:?}"))),
    })
}

/// Emits the call of `nagi_rt_config_declare` where the builder stands (the entry of the C
/// `main`); nothing for a module without configuration.
pub(crate) fn declare(cx: &Cx<'_, '_>) -> Result<(), Error> {
    let configs = &cx.low.configs;
    if configs.is_empty() {
        return Ok(());
    }
    let (p, i) = (cx.layouts.byte_ptr(), cx.context.i64_type());
    let ty = cx.context.struct_type(
        &[p.into(), i.into(), p.into(), i.into(), i.into(), i.into(), p.into(), i.into(), i.into()],
        false,
    );
    let mut descs = Vec::with_capacity(configs.len());
    for config in configs {
        let (name, name_len) = text(cx, &config.name);
        let (env, env_len) = text(cx, &config.env);
        let (default, default_len) = match &config.default {
            Some(d) => text(cx, d),
            None => (p.const_null(), i.const_zero()),
        };
        descs.push(struct_of(
            cx,
            &[
                name.into(),
                name_len.into(),
                env.into(),
                env_len.into(),
                int(cx, kind(&config.ty)?),
                int(cx, u64::from(config.secret)),
                default.into(),
                default_len.into(),
                int(cx, u64::from(config.default.is_some())),
            ],
        ));
    }
    let array = array_global(cx, "nagi.configs", &descs, ty)?;
    runtime_calls::call(cx, Rt::ConfigDeclare, &[array.into(), int(cx, configs.len() as u64).into()])?;
    Ok(())
}

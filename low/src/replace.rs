//! Replacing functions of a module with hand-written ones (docs/design.md §1, Low rule 7).
//!
//! A replacement file is an ordinary Low module. Each of its functions replaces the function
//! of the same name in the target module; the signatures (parameter types, result type,
//! asyncness) must match exactly. Classes and enums the replacement declares must match the
//! target's of the same name field for field and variant for variant, and every function it calls must exist in the
//! target (or be replaced by it). Names are resolved by name, so numbering in either module
//! does not matter. The caller verifies the result.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::entities::{ClassId, EnumId, FuncId};
use crate::module::{FunctionData, Module};
use crate::ops::OpKind;
use crate::types::Type;

/// Replaces the functions of `target` named like the functions of `with`.
///
/// Errors (all of them, codes `L130`–`L134`): a function of `with` that `target` does not
/// have, a signature that differs (both signatures are named), a class or enum of `with` that
/// `target` lacks or declares differently, a call to a function `target` lacks.
pub fn replace_functions(target: &mut Module, with: &Module) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut map = TypeMap::default();
    for (id, data) in with.enums.iter() {
        match target.enum_by_name(&data.name) {
            None => errors.push(Diagnostic::new(
                "L132",
                format!("the replacement declares enum {}, which the module does not have", data.name),
            )),
            Some(tid) => {
                map.enums.insert(id, tid);
            }
        }
    }
    let classes = &mut map.classes;
    for (id, class) in with.classes.iter() {
        match target.class_by_name(&class.name) {
            None => errors.push(Diagnostic::new(
                "L132",
                format!("the replacement declares class {}, which the module does not have", class.name),
            )),
            Some(tid) => {
                classes.insert(id, tid);
            }
        }
    }
    // Field and variant lists are compared once class and enum ids can be mapped.
    for (id, class) in with.classes.iter() {
        let Some(&tid) = map.classes.get(&id) else { continue };
        let mapped: Vec<(String, Option<Type>)> =
            class.fields.iter().map(|f| (f.name.clone(), map_type(&f.ty, &map))).collect();
        let theirs: Vec<(String, Option<Type>)> =
            target.classes[tid].fields.iter().map(|f| (f.name.clone(), Some(f.ty.clone()))).collect();
        if mapped != theirs {
            errors.push(Diagnostic::new(
                "L133",
                format!("class {} in the replacement differs from the module's class {}", class.name, class.name),
            ));
        }
    }
    for (id, data) in with.enums.iter() {
        let Some(&tid) = map.enums.get(&id) else { continue };
        let mapped: Vec<(String, Option<Option<Type>>)> =
            data.variants.iter().map(|v| (v.name.clone(), v.payload.as_ref().map(|t| map_type(t, &map)))).collect();
        let theirs: Vec<(String, Option<Option<Type>>)> =
            target.enums[tid].variants.iter().map(|v| (v.name.clone(), v.payload.clone().map(Some))).collect();
        if mapped != theirs {
            errors.push(Diagnostic::new(
                "L133",
                format!("enum {} in the replacement differs from the module's enum {}", data.name, data.name),
            ));
        }
    }
    let mut functions: HashMap<FuncId, FuncId> = HashMap::new();
    for (id, func) in with.functions.iter() {
        if let Some(tid) = target.function_by_name(&func.name) {
            functions.insert(id, tid);
        }
    }
    let mut replaced = Vec::new();
    for (id, func) in with.functions.iter() {
        let Some(&tid) = functions.get(&id) else {
            errors.push(Diagnostic::new(
                "L130",
                format!("the replacement defines ${}, but the module has no function of that name", func.name),
            ));
            continue;
        };
        let new = match map_function(func, &map, &functions) {
            Ok(new) => new,
            Err(message) => {
                errors.push(Diagnostic::new("L134", format!("in the replacement ${}: {message}", func.name)));
                continue;
            }
        };
        let old = &target.functions[tid];
        let signature = |f: &FunctionData, m: &Module| {
            let params: Vec<String> = f.param_types().map(|t| t.display(m).to_string()).collect();
            format!(
                "{}fn ${}({}) -> {}",
                if f.is_async { "async " } else { "" },
                f.name,
                params.join(", "),
                f.ret.display(m)
            )
        };
        let same = new.is_async == old.is_async && new.ret == old.ret && new.param_types().eq(old.param_types());
        if !same {
            errors.push(
                Diagnostic::new("L131", format!("the replacement for ${} has a different signature", func.name))
                    .note(format!("the module has:      {}", signature(old, target)))
                    .note(format!("the replacement has: {}", signature(&new, target))),
            );
            continue;
        }
        replaced.push((tid, new));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for (tid, new) in replaced {
        target.functions[tid] = new;
    }
    Ok(())
}

/// The replacement's class and enum ids, mapped to the target's.
#[derive(Default)]
struct TypeMap {
    classes: HashMap<ClassId, ClassId>,
    enums: HashMap<EnumId, EnumId>,
}

fn map_type(ty: &Type, map: &TypeMap) -> Option<Type> {
    Some(match ty {
        Type::Array(t) => Type::Array(Box::new(map_type(t, map)?)),
        Type::Option(t) => Type::Option(Box::new(map_type(t, map)?)),
        Type::Ref { mutable, pointee } => Type::reference(*mutable, map_type(pointee, map)?),
        Type::Class(c) => Type::Class(*map.classes.get(c)?),
        Type::Enum(e) => Type::Enum(*map.enums.get(e)?),
        other => other.clone(),
    })
}

/// `func` with its class and function ids translated into the target module's.
fn map_function(
    func: &FunctionData,
    map: &TypeMap,
    functions: &HashMap<FuncId, FuncId>,
) -> Result<FunctionData, String> {
    let mut new = func.clone();
    let class_of =
        |c: &ClassId| map.classes.get(c).copied().ok_or_else(|| "it uses a class the module does not have".to_string());
    new.ret = map_type(&func.ret, map).ok_or("its result type names a class the module does not have")?;
    for (_, local) in new.locals.iter_mut() {
        local.ty = map_type(&local.ty, map)
            .ok_or_else(|| format!("local %{} has a type naming a class the module does not have", local.name))?;
    }
    for (_, op) in new.ops.iter_mut() {
        match &mut op.kind {
            OpKind::New { class, .. } => *class = class_of(class)?,
            OpKind::RuntimeCall { class: Some(class), .. } => *class = class_of(class)?,
            OpKind::EnumNew { enum_id, .. } => {
                *enum_id = map.enums.get(enum_id).copied().ok_or("it uses an enum the module does not have")?
            }
            OpKind::Call { callee, .. } => {
                let name_missing = || "it calls a function the module does not have".to_string();
                *callee = functions.get(callee).copied().ok_or_else(name_missing)?;
            }
            _ => {}
        }
    }
    Ok(new)
}

//! Emission of one Low function as one Rust function.
//!
//! Every Low local becomes a `let mut` declared at the top of the function (Low locals are
//! function-scoped and assigned before use, which the verifier has checked, so Rust's own
//! initialisation and move checks agree). Structured control flow maps one to one: labelled
//! `loop`, labelled blocks, `for` over ranges and slices, `if`/`else`.

use std::fmt::Write;

use la_arena::ArenaMap;
use nagi_low::{
    BinaryOp, BlockId, Constant, Family, FuncId, FunctionData, LabelId, LocalId, Module, OpKind, Operand, RuntimeFn,
    ScalarType, StrPart, Type, UnaryOp,
};

use crate::names::{LocalNames, ident, label, rust_type, rust_type_with_lifetime};

/// Writes `func` (named `name` in Rust) to `out`. A function that can recurse (`recursive`)
/// starts with the runtime's stack check, so that deep recursion is the trap `stack overflow`.
///
/// An async function whose future could contain itself (`boxed`: on a cycle of calls and
/// spawns, `nagi_low::recursion::async_cycle_functions`) is written as a plain function that
/// returns its body as a boxed `dyn Future + Send`: an `async fn`'s future would contain itself
/// (rustc's E0733), and naming the boxed type also ends the cycle rustc would otherwise follow
/// to prove that the future can move between threads (a task that spawns itself). Every
/// reference parameter gets the one lifetime `'nagi` that the future may borrow for.
pub fn function(out: &mut String, module: &Module, func: &FunctionData, recursive: bool, boxed: bool) {
    let mut names = LocalNames::new();
    let mut locals = ArenaMap::default();
    for (id, local) in func.locals.iter() {
        locals.insert(id, names.fresh(&local.name));
    }
    let mut labels = ArenaMap::default();
    for (id, l) in func.labels.iter() {
        labels.insert(id, label(&l.name));
    }
    let cx = Cx { module, func, locals, labels };
    let param_type = |ty: &Type| {
        if boxed { rust_type_with_lifetime(module, ty, "'nagi") } else { rust_type(module, ty) }
    };
    let params: Vec<String> =
        func.params.iter().map(|p| format!("mut {}: {}", cx.locals[*p], param_type(&func.locals[*p].ty))).collect();
    let name = ident(&func.name);
    let params = params.join(", ");
    if boxed {
        let _ = writeln!(
            out,
            "    pub fn {name}<'nagi>({params}) -> ::std::pin::Pin<::std::boxed::Box<dyn ::std::future::Future<Output = {}> + ::std::marker::Send + 'nagi>> {{\n    ::std::boxed::Box::pin(async move {{",
            rust_type(module, &func.ret)
        );
    } else {
        let asyncness = if func.is_async { "async " } else { "" };
        let ret = match func.ret {
            Type::Unit => String::new(),
            ref ty => format!(" -> {}", rust_type(module, ty)),
        };
        let _ = writeln!(out, "    pub {asyncness}fn {name}({params}){ret} {{");
    }
    for (id, local) in func.locals.iter() {
        if !func.params.contains(&id) {
            let _ = writeln!(out, "        let mut {}: {};", cx.locals[id], rust_type(module, &local.ty));
        }
    }
    if recursive {
        out.push_str("        nagi_runtime::stack::check();\n");
    }
    cx.block(out, func.body, 2);
    if boxed {
        out.push_str("    })\n");
    }
    out.push_str("    }\n");
}

struct Cx<'a> {
    module: &'a Module,
    func: &'a FunctionData,
    locals: ArenaMap<LocalId, String>,
    labels: ArenaMap<LabelId, String>,
}

/// Nesting deeper than this is indented as this deep: the output stays linear in the size of
/// the function even for thousands of nested blocks (rustc does not care about indentation).
pub(crate) const MAX_INDENT: usize = 40;

fn indent(out: &mut String, level: usize) {
    for _ in 0..level.min(MAX_INDENT) {
        out.push_str("    ");
    }
}

/// A piece of work of the body walk: the operations of a block, or a closing line after a
/// nested block. The walk keeps them on an explicit stack, so nesting depth costs heap only.
enum Step {
    Op(nagi_low::OpId, usize),
    Line(&'static str, usize),
}

impl Cx<'_> {
    fn l(&self, local: LocalId) -> &str {
        &self.locals[local]
    }

    fn ty(&self, local: LocalId) -> &Type {
        &self.func.locals[local].ty
    }

    fn label(&self, label: LabelId) -> &str {
        &self.labels[label]
    }

    /// An operand as a Rust expression; negative and special constants are parenthesised or
    /// spelled as constants so that method calls on them parse as intended.
    fn operand(&self, o: &Operand) -> String {
        match o {
            Operand::Local(l) => self.l(*l).to_string(),
            Operand::Const(c) => constant(c),
        }
    }

    /// `actor.call` or `actor.send` (`method`) as an awaited expression: the arguments are
    /// evaluated here and moved into the message, whose handler the actor runs on its state.
    fn message(&self, actor: LocalId, handler: FuncId, args: &[Operand], method: &str) -> String {
        let (bind, mut names) = self.bound_args(args, "nagi_m");
        names.insert(0, "nagi_state".to_owned());
        let handler = ident(&self.module.functions[handler].name);
        format!("{{ {bind}{}.{method}(move |nagi_state| self::{handler}({})) }}.await", self.l(actor), names.join(", "))
    }

    /// Binds `args` to fresh names `{prefix}0`, `{prefix}1`… (the statements, and the names), so
    /// that they are evaluated here and then moved into a closure that calls a function later.
    fn bound_args(&self, args: &[Operand], prefix: &str) -> (String, Vec<String>) {
        let mut bind = String::new();
        let mut names = Vec::with_capacity(args.len() + 1);
        for (i, a) in args.iter().enumerate() {
            let _ = write!(bind, "let {prefix}{i} = {}; ", self.operand(a));
            names.push(format!("{prefix}{i}"));
        }
        (bind, names)
    }

    /// Writes the operations of `block` and everything nested in them, at indentation `level`.
    fn block(&self, out: &mut String, block: BlockId, level: usize) {
        let mut stack = Vec::new();
        push_block(&mut stack, self.func, block, level);
        while let Some(step) = stack.pop() {
            match step {
                Step::Op(op, level) => self.op(out, &self.func.ops[op].kind, level, &mut stack),
                Step::Line(text, level) => {
                    indent(out, level);
                    out.push_str(text);
                }
            }
        }
    }

    /// Writes one operation. An operation with nested blocks writes its opening line and pushes
    /// its blocks and closing lines on `stack`, to be written before the next operation.
    fn op(&self, out: &mut String, kind: &OpKind, level: usize, stack: &mut Vec<Step>) {
        indent(out, level);
        match kind.family() {
            Family::Call | Family::Async => self.call_op(out, kind),
            Family::Control => self.control_op(out, kind, level, stack),
            Family::Scalar | Family::Object | Family::Array | Family::Map => self.data_op(out, kind),
            Family::String | Family::Option | Family::Enum | Family::Ownership => self.value_op(out, kind),
        }
    }

    /// Writes `dest = value;`.
    fn assign(&self, out: &mut String, dest: LocalId, value: String) {
        let _ = writeln!(out, "{} = {value};", self.l(dest));
    }

    /// Calls and the async operations: tasks, actors, supervisors, deferred calls, queues.
    fn call_op(&self, out: &mut String, kind: &OpKind) {
        match kind {
            OpKind::Call { dest, callee, args, awaited } => {
                let args: Vec<String> = args.iter().map(|a| self.operand(a)).collect();
                let name = ident(&self.module.functions[*callee].name);
                let call = format!("self::{name}({}){}", args.join(", "), if *awaited { ".await" } else { "" });
                match dest {
                    Some(d) => self.assign(out, *d, call),
                    None => {
                        let _ = writeln!(out, "{call};");
                    }
                }
            }
            OpKind::RuntimeCall { dest, func, class, args, awaited } => {
                let call = self.runtime_call(*func, *class, args, *awaited);
                match dest {
                    Some(d) => self.assign(out, *d, call),
                    None => {
                        let _ = writeln!(out, "{call};");
                    }
                }
            }
            OpKind::ScopeNew { dest } => self.assign(out, *dest, "nagi_runtime::tasks::Scope::new()".into()),
            OpKind::ScopeSpawn { dest, scope, callee, args, blocking: false } => {
                let args: Vec<String> = args.iter().map(|a| self.operand(a)).collect();
                let name = ident(&self.module.functions[*callee].name);
                self.assign(out, *dest, format!("{}.spawn(self::{name}({}))", self.l(*scope), args.join(", ")))
            }
            OpKind::ScopeSpawn { dest, scope, callee, args, blocking: true } => {
                // The arguments are evaluated here and moved into the work.
                let (bind, names) = self.bound_args(args, "nagi_b");
                let name = ident(&self.module.functions[*callee].name);
                let spawn = format!(
                    "{{ {bind}{}.spawn_blocking(move || self::{name}({})) }}",
                    self.l(*scope),
                    names.join(", ")
                );
                self.assign(out, *dest, spawn)
            }
            OpKind::QueuePush { dest, queue, job, delay } => {
                let name = &self.module.queues[*queue].name;
                let amp = if self.ty(*job).is_ref() { "" } else { "&" };
                let push = format!(
                    "nagi_runtime::queues::push_value({name:?}, {amp}{}, {}).await",
                    self.l(*job),
                    self.operand(delay)
                );
                match dest {
                    Some(d) => self.assign(out, *d, push),
                    None => {
                        let _ = writeln!(out, "{push};");
                    }
                }
            }
            OpKind::DeferNew { dest, callee, args } => {
                // The arguments are evaluated here and moved into the deferred call, whose
                // result is dropped.
                let (bind, names) = self.bound_args(args, "nagi_d");
                let name = ident(&self.module.functions[*callee].name);
                let defer = format!(
                    "{{ {bind}nagi_runtime::defers::Defer::new(move || {{ let _ = self::{name}({}); }}) }}",
                    names.join(", ")
                );
                self.assign(out, *dest, defer)
            }
            OpKind::ScopeEnd { scope } => {
                let _ = writeln!(out, "{}.end().await;", self.l(*scope));
            }
            OpKind::TaskJoin { dest, task } => {
                let join = format!("{}.join().await", self.l(*task));
                match dest {
                    Some(d) => self.assign(out, *d, join),
                    None => {
                        let _ = writeln!(out, "{join};");
                    }
                }
            }
            OpKind::ActorStart { dest, init, capacity } => {
                let name = self.module.actor_name(*init);
                let init = &self.module.functions[*init];
                let start =
                    format!("nagi_runtime::actors::Actor::start({name:?}, {capacity}, self::{})", ident(&init.name));
                self.assign(out, *dest, start)
            }
            OpKind::ActorCall { dest, actor, handler, args } => {
                let call = self.message(*actor, *handler, args, "call");
                match dest {
                    Some(d) => self.assign(out, *d, call),
                    None => {
                        let _ = writeln!(out, "{call};");
                    }
                }
            }
            OpKind::SupervisorChild { dest, tree, path } => {
                let trees = self.module.supervisor_trees();
                let index = trees.iter().position(|t| t == tree).unwrap_or(0);
                let state = match &self.func.locals[*dest].ty {
                    Type::Actor(c) => ident(&self.module.classes[*c].name),
                    _ => "()".into(),
                };
                let path: Vec<String> = path.iter().map(u32::to_string).collect();
                let child = format!(
                    "nagi_runtime::supervisors::child::<{state}>(self::nagi_supervisors, {index}, &[{}])",
                    path.join(", ")
                );
                self.assign(out, *dest, child)
            }
            OpKind::ActorSend { actor, handler, args } => {
                let send = self.message(*actor, *handler, args, "send");
                let _ = writeln!(out, "{send};");
            }
            _ => {}
        }
    }

    /// Control flow: the opening line, with the blocks and closing lines pushed on `stack`.
    fn control_op(&self, out: &mut String, kind: &OpKind, level: usize, stack: &mut Vec<Step>) {
        match kind {
            OpKind::If { cond, then_block, else_block } => {
                let _ = writeln!(out, "if {} {{", self.operand(cond));
                // Pushed in reverse: the then-block comes off the stack first.
                stack.push(Step::Line("}\n", level));
                if let Some(else_block) = else_block {
                    push_block(stack, self.func, *else_block, level + 1);
                    stack.push(Step::Line("} else {\n", level));
                }
                push_block(stack, self.func, *then_block, level + 1);
            }
            OpKind::Loop { label, body } => {
                let _ = writeln!(out, "{}: loop {{", self.label(*label));
                stack.push(Step::Line("}\n", level));
                push_block(stack, self.func, *body, level + 1);
            }
            OpKind::Block { label, body } => {
                let _ = writeln!(out, "{}: {{", self.label(*label));
                stack.push(Step::Line("}\n", level));
                push_block(stack, self.func, *body, level + 1);
            }
            OpKind::ForRange { var, start, end, label, body } => {
                // The Low local takes each value, so it keeps the last one after the loop, as
                // Low's semantics say; the iterator's own binding is internal.
                let _ = writeln!(
                    out,
                    "{}: for nagi_i in {}..{} {{",
                    self.label(*label),
                    self.operand(start),
                    self.operand(end)
                );
                indent(out, level + 1);
                let _ = writeln!(out, "{} = nagi_i;", self.l(*var));
                stack.push(Step::Line("}\n", level));
                push_block(stack, self.func, *body, level + 1);
            }
            OpKind::ForEach { var, seq, label, body } => {
                let copy = !self.ty(*var).is_ref();
                let _ = writeln!(out, "{}: for nagi_e in {}.iter() {{", self.label(*label), self.l(*seq));
                indent(out, level + 1);
                let _ = writeln!(out, "{} = {}nagi_e;", self.l(*var), if copy { "*" } else { "" });
                stack.push(Step::Line("}\n", level));
                push_block(stack, self.func, *body, level + 1);
            }
            OpKind::Break { label } => {
                let _ = writeln!(out, "break {};", self.label(*label));
            }
            OpKind::Continue { label } => {
                let _ = writeln!(out, "continue {};", self.label(*label));
            }
            OpKind::Return { value } => match value {
                Some(v) if !matches!(v, Operand::Const(Constant::Unit)) => {
                    let _ = writeln!(out, "return {};", self.operand(v));
                }
                _ => out.push_str("return;\n"),
            },
            OpKind::Trap { message } => {
                let _ = writeln!(out, "nagi_runtime::trap({message:?});");
            }
            _ => {}
        }
    }

    /// Scalars, objects, arrays and maps.
    fn data_op(&self, out: &mut String, kind: &OpKind) {
        match kind {
            OpKind::Const { dest, value } => self.assign(out, *dest, constant(value)),
            OpKind::Unary { dest, op, ty, arg } => self.assign(out, *dest, unary(*op, *ty, &self.operand(arg))),
            OpKind::Binary { dest, op, ty, lhs, rhs } => {
                self.assign(out, *dest, binary(*op, *ty, &self.operand(lhs), &self.operand(rhs)))
            }
            OpKind::Cast { dest, to, arg } => {
                self.assign(out, *dest, format!("({} as {})", self.operand(arg), to.name()))
            }
            OpKind::New { dest, class, fields } => {
                let class = &self.module.classes[*class];
                let inits: Vec<String> = class
                    .fields
                    .iter()
                    .zip(fields)
                    .map(|(f, v)| format!("{}: {}", ident(&f.name), self.operand(v)))
                    .collect();
                self.assign(out, *dest, format!("{} {{ {} }}", ident(&class.name), inits.join(", ")))
            }
            OpKind::FieldGet { dest, object, field } => {
                self.assign(out, *dest, format!("{}.{}", self.l(*object), self.field(*object, *field)))
            }
            OpKind::FieldRef { dest, object, field, mutable } => {
                let amp = if *mutable { "&mut " } else { "&" };
                self.assign(out, *dest, format!("{amp}{}.{}", self.l(*object), self.field(*object, *field)))
            }
            OpKind::FieldSet { object, field, value } => {
                let _ = writeln!(out, "{}.{} = {};", self.l(*object), self.field(*object, *field), self.operand(value));
            }
            OpKind::ArrayNew { dest } => self.assign(out, *dest, "::std::vec::Vec::new()".into()),
            OpKind::ArrayLen { dest, array } => self.assign(out, *dest, format!("({}.len() as i64)", self.l(*array))),
            OpKind::ArrayGet { dest, array, index } => self.assign(out, *dest, self.element(*array, index)),
            OpKind::ArrayRef { dest, array, index, mutable: false } => {
                self.assign(out, *dest, format!("&{}", self.element(*array, index)))
            }
            // The bounds check reads the length before the mutable borrow starts (Rust's
            // two-phase borrows do not cover `IndexMut`).
            OpKind::ArrayRef { dest, array, index, mutable: true } => {
                let a = self.l(*array);
                let _ = writeln!(
                    out,
                    "{{ let nagi_k = nagi_runtime::ops::index({}, {a}.len()); {} = &mut {a}[nagi_k]; }}",
                    self.operand(index),
                    self.l(*dest)
                );
            }
            OpKind::ArraySet { array, index, value } => {
                let a = self.l(*array);
                let _ = writeln!(
                    out,
                    "{{ let nagi_k = nagi_runtime::ops::index({}, {a}.len()); {a}[nagi_k] = {}; }}",
                    self.operand(index),
                    self.operand(value)
                );
            }
            OpKind::ArrayPush { array, value } => {
                let _ = writeln!(out, "{}.push({});", self.l(*array), self.operand(value));
            }
            OpKind::MapNew { dest } => self.assign(out, *dest, "nagi_runtime::map::Map::new()".into()),
            OpKind::MapLen { dest, map } => self.assign(out, *dest, format!("({}.len() as i64)", self.l(*map))),
            OpKind::MapFind { dest, map, key } => {
                self.assign(out, *dest, format!("{}.find({})", self.l(*map), self.key(key)))
            }
            OpKind::MapRef { dest, map, index, value } => {
                let method = if *value { "value_at" } else { "key_at" };
                self.assign(out, *dest, format!("{}.{method}({})", self.l(*map), self.operand(index)))
            }
            OpKind::MapInsert { map, key, value } => {
                let _ = writeln!(out, "{}.insert({}, {});", self.l(*map), self.operand(key), self.operand(value));
            }
            OpKind::MapRemove { dest, map, key } => {
                self.assign(out, *dest, format!("{}.remove({})", self.l(*map), self.key(key)))
            }
            _ => {}
        }
    }

    /// Strings, options, enums and ownership.
    fn value_op(&self, out: &mut String, kind: &OpKind) {
        match kind {
            OpKind::Copy { dest, src } | OpKind::Move { dest, src } => {
                self.assign(out, *dest, self.l(*src).to_string())
            }
            OpKind::StringLit { dest, value } => {
                self.assign(out, *dest, format!("::std::string::String::from({value:?})"))
            }
            OpKind::StrLen { dest, string } => self.assign(out, *dest, format!("({}.len() as i64)", self.l(*string))),
            OpKind::StrConcat { dest, parts } => {
                let parts: Vec<String> = parts
                    .iter()
                    .map(|part| match part {
                        StrPart::Local(local) => format!("{}.as_str()", self.l(*local)),
                        StrPart::Text(text) => format!("{text:?}"),
                    })
                    .collect();
                self.assign(out, *dest, format!("nagi_runtime::ops::concat([{}])", parts.join(", ")))
            }
            OpKind::StrEq { dest, lhs, rhs } => {
                self.assign(out, *dest, format!("({}.as_str() == {}.as_str())", self.l(*lhs), self.l(*rhs)))
            }
            OpKind::OptionSome { dest, value } => {
                self.assign(out, *dest, format!("::std::option::Option::Some({})", self.operand(value)))
            }
            OpKind::OptionNone { dest } => self.assign(out, *dest, "::std::option::Option::None".into()),
            OpKind::OptionIsSome { dest, option } => self.assign(out, *dest, format!("{}.is_some()", self.l(*option))),
            OpKind::OptionUnwrap { dest, option } => {
                self.assign(out, *dest, format!("nagi_runtime::ops::unwrap({})", self.l(*option)))
            }
            OpKind::EnumNew { dest, enum_id, variant, payload } => {
                let path = self.variant_path(&Type::Enum(*enum_id), *variant);
                let value = match payload {
                    Some(p) => format!("{path}({})", self.operand(p)),
                    None => path,
                };
                self.assign(out, *dest, value)
            }
            OpKind::EnumIs { dest, value, variant } => {
                let pattern = self.variant_pattern(*value, *variant, "_");
                self.assign(out, *dest, format!("::std::matches!({}, {pattern})", self.l(*value)))
            }
            OpKind::EnumGet { dest, value, variant } | OpKind::EnumRef { dest, value, variant } => {
                // A reference is matched as it is, so the payload's borrow lives as long as it.
                let scrutinee =
                    if self.ty(*value).is_ref() { self.l(*value).to_string() } else { format!("&{}", self.l(*value)) };
                let pattern = self.variant_pattern(*value, *variant, "nagi_p");
                let take = if matches!(kind, OpKind::EnumGet { .. }) { "*nagi_p" } else { "nagi_p" };
                let message = nagi_low::enum_mismatch_message(self.module, self.ty(*value).through_ref().0, *variant);
                self.assign(
                    out,
                    *dest,
                    format!("match {scrutinee} {{ {pattern} => {take}, _ => nagi_runtime::trap({message:?}) }}"),
                )
            }
            OpKind::Clone { dest, src } => {
                let amp = if self.ty(*src).is_ref() { "" } else { "&" };
                self.assign(out, *dest, format!("::std::clone::Clone::clone({amp}{})", self.l(*src)))
            }
            OpKind::Drop { local } => {
                let _ = writeln!(out, "::std::mem::drop({});", self.l(*local));
            }
            OpKind::Borrow { dest, src, mutable } => {
                let value = match (self.ty(*src).is_ref(), mutable) {
                    // A shared reborrow of a `&mut T`.
                    (true, _) => format!("&*{}", self.l(*src)),
                    (false, true) => format!("&mut {}", self.l(*src)),
                    (false, false) => format!("&{}", self.l(*src)),
                };
                self.assign(out, *dest, value)
            }
            OpKind::Load { dest, reference } => self.assign(out, *dest, format!("*{}", self.l(*reference))),
            OpKind::Store { reference, value } => {
                let _ = writeln!(out, "*{} = {};", self.l(*reference), self.operand(value));
            }
            _ => {}
        }
    }

    /// `Enum::Variant` for variant `variant` of the enum type `ty`.
    fn variant_path(&self, ty: &Type, variant: u32) -> String {
        match ty {
            Type::Enum(e) => {
                let data = &self.module.enums[*e];
                format!("{}::{}", ident(&data.name), ident(&data.variants[variant as usize].name))
            }
            _ => "()".into(),
        }
    }

    /// The pattern of variant `variant` of the enum `value` is or refers to, binding its payload
    /// (if it carries one) to `binding`.
    fn variant_pattern(&self, value: LocalId, variant: u32, binding: &str) -> String {
        let ty = self.ty(value).through_ref().0;
        let path = self.variant_path(ty, variant);
        match ty {
            Type::Enum(e) if self.module.enums[*e].variants[variant as usize].payload.is_some() => {
                format!("{path}({binding})")
            }
            _ => path,
        }
    }

    fn field(&self, object: LocalId, field: u32) -> String {
        match self.ty(object).through_ref().0 {
            Type::Class(c) => ident(&self.module.classes[*c].fields[field as usize].name),
            _ => format!("{field}"),
        }
    }

    /// The Rust name of field `index` of class `class` (the verifier has checked that it exists).
    fn class_field(&self, class: Option<nagi_low::ClassId>, index: i64) -> String {
        let fields = class
            .and_then(|c| nagi_low::ArenaGet::get(&self.module.classes, c))
            .map(|c| &c.fields[..])
            .unwrap_or_default();
        usize::try_from(index).ok().and_then(|i| fields.get(i)).map(|f| ident(&f.name)).unwrap_or_else(|| "0".into())
    }

    /// A key looked up in a map: `&str` for a `&String`, a reference to an `i64`.
    fn key(&self, key: &Operand) -> String {
        if self.is_string_ref(key) {
            format!("{}.as_str()", self.operand(key))
        } else {
            format!("&{}", self.operand(key))
        }
    }

    /// Whether `operand` is a `&String` local.
    fn is_string_ref(&self, operand: &Operand) -> bool {
        operand.as_local().is_some_and(|l| matches!(self.ty(l), Type::Ref { pointee, .. } if **pointee == Type::String))
    }

    /// `a[checked index]`, with Nagi's out-of-range trap.
    fn element(&self, array: LocalId, index: &Operand) -> String {
        let a = self.l(array);
        format!("{a}[nagi_runtime::ops::index({}, {a}.len())]", self.operand(index))
    }

    fn runtime_call(
        &self,
        func: RuntimeFn,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
        awaited: bool,
    ) -> String {
        let a: Vec<String> = args.iter().map(|o| self.operand(o)).collect();
        let class_id = class;
        let class = class.map(|c| ident(&self.module.classes[c].name));
        let turbofish = class.map(|c| format!("::<{c}>")).unwrap_or_default();
        let sql_args = || {
            let values: Vec<String> = a[1..].iter().map(|v| format!("nagi_runtime::db::SqlValue::from({v})")).collect();
            format!("::std::vec![{}]", values.join(", "))
        };
        let call = match func {
            RuntimeFn::PrintI32 => format!("nagi_runtime::rt::print_i32({})", a[0]),
            RuntimeFn::PrintI64 => format!("nagi_runtime::rt::print_i64({})", a[0]),
            RuntimeFn::PrintF64 => format!("nagi_runtime::rt::print_f64({})", a[0]),
            RuntimeFn::PrintBool => format!("nagi_runtime::rt::print_bool({})", a[0]),
            RuntimeFn::PrintStr => format!("nagi_runtime::rt::print_str({}.as_str())", a[0]),
            RuntimeFn::FmtI32 => format!("nagi_runtime::rt::fmt_i32({})", a[0]),
            RuntimeFn::FmtI64 => format!("nagi_runtime::rt::fmt_i64({})", a[0]),
            RuntimeFn::FmtF64 => format!("nagi_runtime::rt::fmt_f64({})", a[0]),
            RuntimeFn::FmtBool => format!("nagi_runtime::rt::fmt_bool({})", a[0]),
            RuntimeFn::StrContains => format!("nagi_runtime::strings::contains({}.as_str(), {}.as_str())", a[0], a[1]),
            RuntimeFn::StrStartsWith => {
                format!("nagi_runtime::strings::starts_with({}.as_str(), {}.as_str())", a[0], a[1])
            }
            RuntimeFn::StrEndsWith => format!("nagi_runtime::strings::ends_with({}.as_str(), {}.as_str())", a[0], a[1]),
            RuntimeFn::StrFind => format!("nagi_runtime::strings::find({}.as_str(), {}.as_str())", a[0], a[1]),
            RuntimeFn::StrSplit => format!("nagi_runtime::strings::split({}.as_str(), {}.as_str())", a[0], a[1]),
            RuntimeFn::StrTrim => format!("nagi_runtime::strings::trim({}.as_str())", a[0]),
            RuntimeFn::StrToLower => format!("nagi_runtime::strings::to_lower({}.as_str())", a[0]),
            RuntimeFn::StrToUpper => format!("nagi_runtime::strings::to_upper({}.as_str())", a[0]),
            RuntimeFn::StrReplace => {
                format!("nagi_runtime::strings::replace({}.as_str(), {}.as_str(), {}.as_str())", a[0], a[1], a[2])
            }
            RuntimeFn::StrJoin => format!("nagi_runtime::strings::join({}.as_slice(), {}.as_str())", a[0], a[1]),
            RuntimeFn::StrSlice => format!("nagi_runtime::strings::slice({}.as_str(), {}, {})", a[0], a[1], a[2]),
            RuntimeFn::StrParseI64 => format!("nagi_runtime::strings::parse_i64({}.as_str())", a[0]),
            RuntimeFn::StrParseF64 => format!("nagi_runtime::strings::parse_f64({}.as_str())", a[0]),
            RuntimeFn::ArraySort => format!("nagi_runtime::arrays::sort({}.as_mut_slice())", a[0]),
            RuntimeFn::ArraySortBy => {
                let field = match args.get(1) {
                    Some(Operand::Const(Constant::I64(i))) => self.class_field(class_id, *i),
                    _ => "0".into(),
                };
                format!("nagi_runtime::arrays::sort_by({}.as_mut_slice(), |e| &e.{field})", a[0])
            }
            RuntimeFn::ArrayReverse => format!("nagi_runtime::arrays::reverse({}.as_mut_slice())", a[0]),
            RuntimeFn::ArraySortByKeys => {
                format!("nagi_runtime::arrays::sort_by_keys({}.as_mut_slice(), {}.as_slice())", a[0], a[1])
            }
            RuntimeFn::ArrayContains => {
                let value =
                    if self.is_string_ref(&args[1]) { format!("{}.as_str()", a[1]) } else { format!("&{}", a[1]) };
                format!("nagi_runtime::arrays::contains({}.as_slice(), {value})", a[0])
            }
            RuntimeFn::ArraySlice => format!("nagi_runtime::arrays::slice({}.as_slice(), {}, {})", a[0], a[1], a[2]),
            RuntimeFn::HttpFail => format!("nagi_runtime::http::fail({}, {}.as_str())", a[0], a[1]),
            RuntimeFn::HttpClearFailure => "nagi_runtime::http::clear_failure()".into(),
            RuntimeFn::HttpFailureStatus => "nagi_runtime::http::failure_status()".into(),
            RuntimeFn::HttpTakeFailure => "nagi_runtime::http::take_failure()".into(),
            RuntimeFn::TestSelected => "nagi_runtime::program::selected_test()".into(),
            RuntimeFn::TimeSleep => format!("nagi_runtime::rt::sleep({})", a[0]),
            RuntimeFn::ConfigStr => format!("nagi_runtime::configuration::str({})", a[0]),
            RuntimeFn::ConfigI64 => format!("nagi_runtime::configuration::int({})", a[0]),
            RuntimeFn::ConfigF64 => format!("nagi_runtime::configuration::float({})", a[0]),
            RuntimeFn::ConfigBool => format!("nagi_runtime::configuration::boolean({})", a[0]),
            RuntimeFn::ConfigDuration => format!("nagi_runtime::configuration::duration({})", a[0]),
            RuntimeFn::UuidV7 => "nagi_runtime::ids::v7()".into(),
            RuntimeFn::UuidV4 => "nagi_runtime::ids::v4()".into(),
            RuntimeFn::UuidEq => format!("({} == {})", a[0], a[1]),
            RuntimeFn::UuidFormat => format!("{}.to_string()", a[0]),
            RuntimeFn::UuidParse => format!("nagi_runtime::ids::parse_uuid({}.as_str())", a[0]),
            RuntimeFn::TimeNow => "nagi_runtime::time::now()".into(),
            RuntimeFn::TimeMonotonic => "nagi_runtime::time::monotonic()".into(),
            RuntimeFn::TimeFromMicros => format!("nagi_runtime::time::Time::from_micros({})", a[0]),
            RuntimeFn::DurationFromMicros => format!("nagi_runtime::time::Duration::from_micros({})", a[0]),
            RuntimeFn::TimeMicros | RuntimeFn::DurationMicros => format!("{}.micros()", a[0]),
            RuntimeFn::TimeFormat | RuntimeFn::DurationFormat => format!("{}.to_string()", a[0]),
            RuntimeFn::TimeParse => format!("nagi_runtime::time::parse({}.as_str())", a[0]),
            RuntimeFn::TimeSetClock => format!("nagi_runtime::time::set_clock({})", a[0]),
            RuntimeFn::RandInt => format!("nagi_runtime::secrets::random_int({}, {})", a[0], a[1]),
            RuntimeFn::RandToken => format!("nagi_runtime::secrets::token({})", a[0]),
            RuntimeFn::SecretEq => format!("nagi_runtime::secrets::secure_eq({}.as_str(), {}.as_str())", a[0], a[1]),
            RuntimeFn::PasswordHash => format!("nagi_runtime::secrets::hash_password({}.as_str())", a[0]),
            RuntimeFn::PasswordVerify => {
                format!("nagi_runtime::secrets::verify_password({}.as_str(), {}.as_str())", a[0], a[1])
            }
            RuntimeFn::TestFailed => "nagi_runtime::program::test_failed()".into(),
            RuntimeFn::TestAssertFailed => format!("nagi_runtime::program::assert_failed({}.as_str())", a[0]),
            RuntimeFn::HttpSetHeader => {
                format!("nagi_runtime::http::set_header({}.as_str(), {}.as_str())", a[0], a[1])
            }
            RuntimeFn::JsonEncode => format!("nagi_runtime::rt::json_encode({})", a[0]),
            RuntimeFn::JsonDecode => format!("nagi_runtime::rt::json_decode{turbofish}({}.as_str())", a[0]),
            RuntimeFn::DbExec => format!("nagi_runtime::db::exec({}.as_str(), {})", a[0], sql_args()),
            RuntimeFn::DbExecCommit => format!("nagi_runtime::db::exec_commit({}.as_str(), {})", a[0], sql_args()),
            RuntimeFn::DbQuery => format!("nagi_runtime::db::query{turbofish}({}.as_str(), {})", a[0], sql_args()),
            RuntimeFn::DbQueryOne => {
                format!("nagi_runtime::db::query_one{turbofish}({}.as_str(), {})", a[0], sql_args())
            }
            RuntimeFn::DbBegin => "nagi_runtime::db::begin()".into(),
            RuntimeFn::DbCommit => "nagi_runtime::db::commit()".into(),
            RuntimeFn::DbRollback => "nagi_runtime::db::rollback()".into(),
            RuntimeFn::QueueDeadLetters => {
                format!("nagi_runtime::queues::dead_letter_rows{turbofish}({}.as_str())", a[0])
            }
            RuntimeFn::QueueRetry => format!("nagi_runtime::queues::retry({}.as_str(), {})", a[0], a[1]),
            RuntimeFn::HttpFetch | RuntimeFn::HttpFetchJson => {
                let call = format!(
                    "nagi_runtime::outbound::Call::new({}.as_str(), {}.as_str(), {}.as_str(), {}.iter().map(String::as_str), {})",
                    a[0], a[1], a[2], a[3], a[4]
                );
                match func {
                    RuntimeFn::HttpFetch => format!("nagi_runtime::outbound::fetch_text({call})"),
                    _ => format!("nagi_runtime::outbound::fetch_json{turbofish}({call})"),
                }
            }
        };
        if awaited { format!("{call}.await") } else { call }
    }
}

/// Pushes the operations of `block` so that the first comes off the stack first.
fn push_block(stack: &mut Vec<Step>, func: &FunctionData, block: BlockId, level: usize) {
    stack.extend(func.blocks[block].ops.iter().rev().map(|&op| Step::Op(op, level)));
}

/// A constant as a Rust expression.
fn constant(c: &Constant) -> String {
    match c {
        Constant::I32(i32::MIN) => "i32::MIN".into(),
        Constant::I64(i64::MIN) => "i64::MIN".into(),
        Constant::I32(v) if *v < 0 => format!("({v}i32)"),
        Constant::I64(v) if *v < 0 => format!("({v}i64)"),
        Constant::I32(v) => format!("{v}i32"),
        Constant::I64(v) => format!("{v}i64"),
        Constant::F64(v) if v.is_nan() => "f64::NAN".into(),
        Constant::F64(v) if *v == f64::INFINITY => "f64::INFINITY".into(),
        Constant::F64(v) if *v == f64::NEG_INFINITY => "f64::NEG_INFINITY".into(),
        Constant::F64(v) if v.is_sign_negative() => format!("({v:?}f64)"),
        Constant::F64(v) => format!("{v:?}f64"),
        Constant::Bool(v) => v.to_string(),
        Constant::Unit => "()".into(),
    }
}

fn unary(op: UnaryOp, ty: ScalarType, a: &str) -> String {
    match (op, ty) {
        (UnaryOp::Neg, ScalarType::F64) => format!("(-{a})"),
        (UnaryOp::Neg, _) => format!("{a}.wrapping_neg()"),
        (UnaryOp::Not, _) => format!("(!{a})"),
        (UnaryOp::Abs, ScalarType::F64) => format!("{a}.abs()"),
        (UnaryOp::Abs, _) => format!("{a}.wrapping_abs()"),
    }
}

fn binary(op: BinaryOp, ty: ScalarType, a: &str, b: &str) -> String {
    let int = ty.is_int();
    let t = ty.name();
    match op {
        BinaryOp::Add if int => format!("{a}.wrapping_add({b})"),
        BinaryOp::Sub if int => format!("{a}.wrapping_sub({b})"),
        BinaryOp::Mul if int => format!("{a}.wrapping_mul({b})"),
        BinaryOp::Div if int => format!("nagi_runtime::ops::div_{t}({a}, {b})"),
        BinaryOp::Rem if int => format!("nagi_runtime::ops::rem_{t}({a}, {b})"),
        BinaryOp::Add => format!("({a} + {b})"),
        BinaryOp::Sub => format!("({a} - {b})"),
        BinaryOp::Mul => format!("({a} * {b})"),
        BinaryOp::Div => format!("({a} / {b})"),
        BinaryOp::Rem => format!("({a} % {b})"),
        BinaryOp::And => format!("({a} & {b})"),
        BinaryOp::Or => format!("({a} | {b})"),
        BinaryOp::Xor => format!("({a} ^ {b})"),
        // `wrapping_shl`/`wrapping_shr` mask the count to the bit width; `as u32` keeps the low
        // bits of a negative count, so masking gives docs/design.md §2.3's result for every count.
        BinaryOp::Shl => format!("{a}.wrapping_shl({b} as u32)"),
        BinaryOp::Shr => format!("{a}.wrapping_shr({b} as u32)"),
        BinaryOp::Eq => format!("({a} == {b})"),
        BinaryOp::Ne => format!("({a} != {b})"),
        BinaryOp::Lt => format!("({a} < {b})"),
        BinaryOp::Le => format!("({a} <= {b})"),
        BinaryOp::Gt => format!("({a} > {b})"),
        BinaryOp::Ge => format!("({a} >= {b})"),
        BinaryOp::Min if ty == ScalarType::F64 => format!("nagi_runtime::ops::fmin({a}, {b})"),
        BinaryOp::Max if ty == ScalarType::F64 => format!("nagi_runtime::ops::fmax({a}, {b})"),
        BinaryOp::Min => format!("::std::cmp::Ord::min({a}, {b})"),
        BinaryOp::Max => format!("::std::cmp::Ord::max({a}, {b})"),
        BinaryOp::CheckedAdd => format!("{a}.checked_add({b})"),
        BinaryOp::CheckedSub => format!("{a}.checked_sub({b})"),
        BinaryOp::CheckedMul => format!("{a}.checked_mul({b})"),
    }
}

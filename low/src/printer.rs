//! The Low text printer: the one canonical spelling of a module.
//!
//! Output is deterministic (a function of the module alone, plus comments when a
//! [`SourceMap`] is given): classes, then tables, then routes, then functions, each in arena
//! order; inside a function, parameters in the header, `let` lines for the other locals in
//! arena order, then the body with two spaces of indentation per level. `parser::parse` reads
//! every printed module back to an equal one, and printing that again gives the same text.
//! Names come from the tables in [`crate::ops`] and [`crate::runtime`].

use std::fmt::Write;

use la_arena::ArenaMap;

use crate::entities::{ArenaGet, BlockId, FuncId, LocalId, OpId};
use crate::facts::Family;
use crate::module::{ChildKind, FORMAT_VERSION, FunctionData, Module};
use crate::ops::{OpKind, Operand, StrPart};
use crate::source::{Anchor, SourceMap};

/// Prints `module` in canonical Low text, with the comments of `source` where given.
pub fn print_module(module: &Module, source: Option<&SourceMap>) -> String {
    let mut p = Printer::new(module, source);
    p.module();
    p.out
}

/// The 1-based line of each printed operation, per function: where [`print_module_with_lines`]
/// wrote each operation's first line.
pub type LineTable = ArenaMap<FuncId, ArenaMap<OpId, u32>>;

/// Prints `module` exactly as [`print_module`] does without comments, and also answers the
/// line on which each operation's first line was written. Tools that point into Low (the cost
/// report) use it, so that their line numbers refer to the one canonical text.
pub fn print_module_with_lines(module: &Module) -> (String, LineTable) {
    let mut p = Printer::new(module, None);
    p.lines = Some(Lines::default());
    p.module();
    let table = p.lines.map(|l| l.table).unwrap_or_default();
    (p.out, table)
}

/// Prints one function (header and body) in canonical Low text, without comments. Used in
/// diagnostics and by tools that show or replace single functions.
pub fn print_function(module: &Module, func: FuncId) -> String {
    let mut p = Printer::new(module, None);
    p.function(func);
    p.out
}

/// Prints one operation's first line (for a control-flow operation, up to its `{`), without
/// indentation or newline. Used to name operations in diagnostics.
pub fn print_op_head(module: &Module, func: &FunctionData, op: OpId) -> String {
    let mut p = Printer::new(module, None);
    if let Some(data) = func.ops.get(op) {
        p.op_head(func, &data.kind);
    }
    p.out
}

/// Writes `s` as a Low string literal: `"` … `"` with `\\`, `\"`, `\n`, `\r`, `\t`, `\0` and
/// `\u{…}` for other control characters; everything else is written as itself.
pub fn write_string_literal(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Printer<'a> {
    module: &'a Module,
    source: Option<&'a SourceMap>,
    out: String,
    /// Where operations were printed, when asked for.
    lines: Option<Lines>,
}

/// Line bookkeeping for [`print_module_with_lines`]: newlines are counted incrementally from
/// the last position, so recording every operation's line stays linear in the output size.
#[derive(Default)]
struct Lines {
    counted_to: usize,
    newlines: u32,
    table: LineTable,
}

impl<'a> Printer<'a> {
    fn new(module: &'a Module, source: Option<&'a SourceMap>) -> Printer<'a> {
        Printer { module, source, out: String::new(), lines: None }
    }

    /// Records that operation `op` of function `func` starts on the line being written now.
    fn record_line(&mut self, func: FuncId, op: OpId) {
        let Some(lines) = self.lines.as_mut() else { return };
        lines.newlines += self.out.as_bytes()[lines.counted_to..].iter().filter(|&&b| b == b'\n').count() as u32;
        lines.counted_to = self.out.len();
        let line = lines.newlines + 1;
        match lines.table.get_mut(func) {
            Some(map) => {
                map.insert(op, line);
            }
            None => {
                let mut map = ArenaMap::default();
                map.insert(op, line);
                lines.table.insert(func, map);
            }
        }
    }
    fn comments(&mut self, anchor: Anchor, indent: usize) {
        if let Some(source) = self.source {
            for line in source.comments(anchor) {
                self.indent(indent);
                self.out.push_str("//");
                self.out.push_str(line);
                self.out.push('\n');
            }
        }
    }

    fn indent(&mut self, level: usize) {
        for _ in 0..level {
            self.out.push_str("  ");
        }
    }

    fn module(&mut self) {
        let m = self.module;
        let _ = writeln!(self.out, "nagi-low {FORMAT_VERSION}");
        self.comments(Anchor::ModuleHeader, 0);
        let _ = writeln!(self.out, "module {}", m.name);
        for (id, class) in m.classes.iter() {
            self.out.push('\n');
            self.comments(Anchor::Class(id), 0);
            let _ = writeln!(self.out, "class {} {{", class.name);
            for (i, field) in class.fields.iter().enumerate() {
                self.comments(Anchor::Field(id, i as u32), 1);
                let _ = writeln!(self.out, "  {}: {}", field.name, field.ty.display(m));
            }
            self.comments(Anchor::ClassEnd(id), 1);
            self.out.push_str("}\n");
        }
        for (id, data) in m.enums.iter() {
            self.out.push('\n');
            self.comments(Anchor::Enum(id), 0);
            let _ = writeln!(self.out, "enum {} {{", data.name);
            for (i, variant) in data.variants.iter().enumerate() {
                self.comments(Anchor::Variant(id, i as u32), 1);
                match &variant.payload {
                    Some(ty) => {
                        let _ = writeln!(self.out, "  {}({})", variant.name, ty.display(m));
                    }
                    None => {
                        let _ = writeln!(self.out, "  {}", variant.name);
                    }
                }
            }
            self.comments(Anchor::EnumEnd(id), 1);
            self.out.push_str("}\n");
        }
        if !m.tables.is_empty() {
            self.out.push('\n');
        }
        for (i, table) in m.tables.iter().enumerate() {
            self.comments(Anchor::Table(i), 0);
            let class = m.classes.get(table.class);
            let class_name = class.map_or("<invalid class>", |c| c.name.as_str());
            let key =
                class.and_then(|c| c.fields.get(table.key as usize)).map_or("<invalid field>", |f| f.name.as_str());
            let _ = writeln!(self.out, "table {}: {} key {}", table.name, class_name, key);
        }
        if !m.configs.is_empty() {
            self.out.push('\n');
        }
        for (i, config) in m.configs.iter().enumerate() {
            self.comments(Anchor::Config(i), 0);
            let _ = write!(self.out, "config {}: {} env ", config.name, config.ty.display(m));
            write_string_literal(&mut self.out, &config.env);
            if config.secret {
                self.out.push_str(" secret");
            }
            if let Some(default) = &config.default {
                self.out.push_str(" default ");
                write_string_literal(&mut self.out, default);
            }
            self.out.push('\n');
        }
        if !m.routes.is_empty() {
            self.out.push('\n');
        }
        for (i, route) in m.routes.iter().enumerate() {
            self.comments(Anchor::Route(i), 0);
            self.out.push_str("route ");
            self.out.push_str(route.method.name());
            self.out.push(' ');
            write_string_literal(&mut self.out, &route.path);
            let handler = m.functions.get(route.handler).map_or("<invalid function>", |f| f.name.as_str());
            let _ = write!(self.out, " ${handler}");
            if !route.headers.is_empty() {
                let _ = write!(self.out, " headers({})", route.headers.join(", "));
            }
            self.out.push('\n');
        }
        for (id, supervisor) in m.supervisors.iter() {
            self.out.push('\n');
            self.comments(Anchor::Supervisor(id), 0);
            let (min, max) = supervisor.backoff_ms;
            let _ = writeln!(
                self.out,
                "supervisor {} {} intensity {} per {}ms backoff {min}ms {max}ms {{",
                supervisor.name,
                supervisor.strategy.name(),
                supervisor.intensity,
                supervisor.period_ms
            );
            for child in &supervisor.children {
                let _ = match &child.kind {
                    ChildKind::Actor { init, capacity } => {
                        let init = m.functions.get(*init).map_or("<invalid function>", |f| f.name.as_str());
                        writeln!(self.out, "  child {} ${init} mailbox {capacity}", child.name)
                    }
                    ChildKind::Supervisor(s) => {
                        let nested = m.supervisors.get(*s).map_or("<invalid supervisor>", |s| s.name.as_str());
                        writeln!(self.out, "  child {} {nested}", child.name)
                    }
                };
            }
            self.out.push_str("}\n");
        }
        if !m.queues.is_empty() {
            self.out.push('\n');
        }
        for (id, queue) in m.queues.iter() {
            self.comments(Anchor::Queue(id), 0);
            let handler = m.functions.get(queue.handler).map_or("<invalid function>", |f| f.name.as_str());
            let (min, max) = queue.backoff_ms;
            let _ = write!(
                self.out,
                "queue {} ${handler} workers {} max_attempts {} backoff {min}ms {max}ms",
                queue.name, queue.workers, queue.max_attempts
            );
            let _ = match &queue.schedule {
                Some(crate::module::Schedule::Every { ms }) => writeln!(self.out, " every {ms}ms"),
                Some(crate::module::Schedule::Cron(text)) => writeln!(self.out, " cron {text:?}"),
                None => writeln!(self.out),
            };
        }
        for (id, _) in m.functions.iter() {
            self.out.push('\n');
            self.function(id);
        }
        if let Some(source) = self.source
            && !source.comments(Anchor::End).is_empty()
        {
            self.out.push('\n');
            self.comments(Anchor::End, 0);
        }
    }

    fn function(&mut self, id: FuncId) {
        let m = self.module;
        let f = &m.functions[id];
        self.comments(Anchor::Function(id), 0);
        if f.is_async {
            self.out.push_str("async ");
        }
        let _ = write!(self.out, "fn ${}(", f.name);
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            match f.locals.get(*p) {
                Some(local) => {
                    let _ = write!(self.out, "%{}: {}", local.name, local.ty.display(m));
                }
                None => self.out.push_str("<invalid parameter>"),
            }
        }
        let _ = writeln!(self.out, ") -> {} {{", f.ret.display(m));
        for (lid, local) in f.locals.iter() {
            if f.params.contains(&lid) {
                continue;
            }
            self.comments(Anchor::Local(id, lid), 1);
            let _ = writeln!(self.out, "  let %{}: {}", local.name, local.ty.display(m));
        }
        self.block_body(id, f, f.body, 1);
        self.comments(Anchor::BlockEnd(id, f.body), 1);
        self.out.push_str("}\n");
    }

    /// Prints the operations of `block` and everything nested in them. Uses an explicit work
    /// stack so that deeply nested bodies cannot overflow the thread's stack.
    fn block_body(&mut self, fid: FuncId, f: &FunctionData, block: BlockId, level: usize) {
        enum Work {
            Op(OpId, usize),
            Close { block: BlockId, level: usize, last: bool },
        }
        // Checked lookups and a visited set keep a malformed module (a pass's bug, shown by
        // `--print-low-after`) from panicking or looping forever in the printer.
        let ops_of = |b: BlockId| f.blocks.get(b).map_or(&[][..], |b| b.ops.as_slice());
        let mut visited = std::collections::HashSet::from([block]);
        let mut stack: Vec<Work> = ops_of(block).iter().rev().map(|&op| Work::Op(op, level)).collect();
        while let Some(work) = stack.pop() {
            match work {
                Work::Op(op, level) => {
                    self.comments(Anchor::Op(fid, op), level);
                    self.record_line(fid, op);
                    self.indent(level);
                    let Some(data) = f.ops.get(op) else {
                        self.out.push_str("<invalid operation>\n");
                        continue;
                    };
                    let kind = &data.kind;
                    self.op_head(f, kind);
                    self.out.push('\n');
                    // Pushed last block first; the last block closes with `}`, the others with
                    // `} else {`.
                    for (i, b) in kind.blocks().rev().enumerate() {
                        stack.push(Work::Close { block: b, level, last: i == 0 });
                        if visited.insert(b) {
                            stack.extend(ops_of(b).iter().rev().map(|&op| Work::Op(op, level + 1)));
                        }
                    }
                }
                Work::Close { block, level, last } => {
                    self.comments(Anchor::BlockEnd(fid, block), level + 1);
                    self.indent(level);
                    self.out.push_str(if last { "}\n" } else { "} else {\n" });
                }
            }
        }
    }

    fn local(&mut self, f: &FunctionData, l: LocalId) {
        self.out.push('%');
        match f.locals.get(l) {
            Some(local) => self.out.push_str(&local.name),
            None => {
                let _ = write!(self.out, "<invalid local #{}>", l.into_raw());
            }
        }
    }

    fn operand(&mut self, f: &FunctionData, o: &Operand) {
        match o {
            Operand::Local(l) => self.local(f, *l),
            Operand::Const(c) => {
                let _ = write!(self.out, "{c}");
            }
        }
    }

    fn operands(&mut self, f: &FunctionData, ops: &[Operand]) {
        for (i, o) in ops.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.operand(f, o);
        }
    }

    /// `await actor.call %a, $h(args)` or `await actor.send …`, after any destination.
    fn message(&mut self, f: &FunctionData, name: &str, actor: LocalId, handler: FuncId, args: &[Operand]) {
        let _ = write!(self.out, "await {name} ");
        self.local(f, actor);
        let handler = self.module.functions.get(handler).map_or("<invalid function>", |c| c.name.as_str());
        let _ = write!(self.out, ", ${handler}(");
        self.operands(f, args);
        self.out.push(')');
    }

    fn label(&mut self, f: &FunctionData, l: crate::entities::LabelId) {
        self.out.push('@');
        self.out.push_str(f.labels.get(l).map_or("<invalid label>", |label| label.name.as_str()));
    }

    /// Writes `%dest = ` and the mnemonic for operations that have both.
    fn head(&mut self, f: &FunctionData, dest: LocalId, name: &str) {
        self.local(f, dest);
        self.out.push_str(" = ");
        self.out.push_str(name);
    }

    fn op_head(&mut self, f: &FunctionData, kind: &OpKind) {
        let name = kind.opcode().map(|o| o.name()).unwrap_or("");
        match kind.family() {
            Family::Call | Family::Async => self.call_head(f, kind, name),
            Family::Control => self.control_head(f, kind, name),
            _ => self.data_head(f, kind, name),
        }
    }

    /// The operations that name a function, a queue or a supervisor: calls and the async
    /// operations (`await` first for those always awaited).
    fn call_head(&mut self, f: &FunctionData, kind: &OpKind, name: &str) {
        let m = self.module;
        match kind {
            OpKind::Call { dest, callee, args, awaited } => {
                if let Some(d) = dest {
                    self.local(f, *d);
                    self.out.push_str(" = ");
                }
                if *awaited {
                    self.out.push_str("await ");
                }
                let callee = m.functions.get(*callee).map_or("<invalid function>", |c| c.name.as_str());
                let _ = write!(self.out, "{name} ${callee}(");
                self.operands(f, args);
                self.out.push(')');
            }
            OpKind::RuntimeCall { dest, func, class, args, awaited } => {
                if let Some(d) = dest {
                    self.local(f, *d);
                    self.out.push_str(" = ");
                }
                if *awaited {
                    self.out.push_str("await ");
                }
                let _ = write!(self.out, "{name} {}", func.name());
                if let Some(c) = class {
                    let _ = write!(self.out, "<{}>", m.classes.get(*c).map_or("<invalid class>", |c| c.name.as_str()));
                }
                self.out.push('(');
                self.operands(f, args);
                self.out.push(')');
            }
            OpKind::ScopeSpawn { dest, scope, callee, args, .. } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *scope);
                let callee = m.functions.get(*callee).map_or("<invalid function>", |c| c.name.as_str());
                let _ = write!(self.out, ", ${callee}(");
                self.operands(f, args);
                self.out.push(')');
            }
            OpKind::QueuePush { dest, queue, job, delay } => {
                if let Some(d) = dest {
                    self.local(f, *d);
                    self.out.push_str(" = ");
                }
                let queue = m.queues.get(*queue).map_or("<invalid queue>", |q| q.name.as_str());
                let _ = write!(self.out, "await {name} {queue}, ");
                self.local(f, *job);
                self.out.push_str(", ");
                self.operands(f, std::slice::from_ref(delay));
            }
            OpKind::DeferNew { dest, callee, args } => {
                self.head(f, *dest, name);
                let callee = m.functions.get(*callee).map_or("<invalid function>", |c| c.name.as_str());
                let _ = write!(self.out, " ${callee}(");
                self.operands(f, args);
                self.out.push(')');
            }
            OpKind::ScopeEnd { scope } => {
                let _ = write!(self.out, "await {name} ");
                self.local(f, *scope);
            }
            OpKind::TaskJoin { dest, task } => {
                if let Some(d) = dest {
                    self.local(f, *d);
                    self.out.push_str(" = ");
                }
                let _ = write!(self.out, "await {name} ");
                self.local(f, *task);
            }
            OpKind::ActorStart { dest, init, capacity } => {
                self.head(f, *dest, name);
                let init = m.functions.get(*init).map_or("<invalid function>", |c| c.name.as_str());
                let _ = write!(self.out, " ${init}, mailbox {capacity}");
            }
            OpKind::ActorCall { dest, actor, handler, args } => {
                if let Some(d) = dest {
                    self.local(f, *d);
                    self.out.push_str(" = ");
                }
                self.message(f, name, *actor, *handler, args);
            }
            OpKind::ActorSend { actor, handler, args } => self.message(f, name, *actor, *handler, args),
            OpKind::SupervisorChild { dest, tree, path } => {
                self.head(f, *dest, name);
                let mut supervisor = m.supervisors.get(*tree);
                let _ = write!(self.out, " {}", supervisor.map_or("<invalid supervisor>", |s| s.name.as_str()));
                for &step in path {
                    let child = supervisor.and_then(|s| s.children.get(step as usize));
                    let _ = write!(self.out, ", {}", child.map_or("<invalid child>", |c| c.name.as_str()));
                    supervisor = match child.map(|c| &c.kind) {
                        Some(ChildKind::Supervisor(s)) => m.supervisors.get(*s),
                        _ => None,
                    };
                }
            }
            OpKind::ScopeNew { dest } => self.head(f, *dest, name),
            _ => {}
        }
    }

    /// The opening line of control flow (up to its `{`), and jumps, `return` and `trap`.
    fn control_head(&mut self, f: &FunctionData, kind: &OpKind, name: &str) {
        match kind {
            OpKind::If { cond, .. } => {
                self.out.push_str("if ");
                self.operand(f, cond);
                self.out.push_str(" {");
            }
            OpKind::Loop { label, .. } | OpKind::Block { label, .. } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.label(f, *label);
                self.out.push_str(" {");
            }
            OpKind::ForRange { var, start, end, label, .. } => {
                self.out.push_str("for ");
                self.local(f, *var);
                self.out.push_str(" in ");
                self.operand(f, start);
                self.out.push_str("..");
                self.operand(f, end);
                self.out.push(' ');
                self.label(f, *label);
                self.out.push_str(" {");
            }
            OpKind::ForEach { var, seq, label, .. } => {
                self.out.push_str("for ");
                self.local(f, *var);
                self.out.push_str(" in ");
                self.local(f, *seq);
                self.out.push(' ');
                self.label(f, *label);
                self.out.push_str(" {");
            }
            OpKind::Break { label } | OpKind::Continue { label } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.label(f, *label);
            }
            OpKind::Return { value } => {
                self.out.push_str(name);
                if let Some(v) = value {
                    self.out.push(' ');
                    self.operand(f, v);
                }
            }
            OpKind::Trap { message } => {
                self.out.push_str(name);
                self.out.push(' ');
                write_string_literal(&mut self.out, message);
            }
            _ => {}
        }
    }

    /// The other operations: `%dest = mnemonic` and operands.
    fn data_head(&mut self, f: &FunctionData, kind: &OpKind, name: &str) {
        let m = self.module;
        match kind {
            OpKind::Const { dest, value } => {
                self.head(f, *dest, name);
                let _ = write!(self.out, " {value}");
            }
            OpKind::Unary { dest, op, ty, arg } => {
                self.head(f, *dest, op.name());
                let _ = write!(self.out, ".{} ", ty.name());
                self.operand(f, arg);
            }
            OpKind::Binary { dest, op, ty, lhs, rhs } => {
                self.head(f, *dest, op.name());
                let _ = write!(self.out, ".{} ", ty.name());
                self.operands(f, &[*lhs, *rhs]);
            }
            OpKind::Cast { dest, to, arg } => {
                self.head(f, *dest, name);
                let _ = write!(self.out, ".{} ", to.name());
                self.operand(f, arg);
            }
            OpKind::New { dest, class, fields } => {
                self.head(f, *dest, name);
                let class = m.classes.get(*class);
                let _ = write!(self.out, " {} {{", class.map_or("<invalid class>", |c| c.name.as_str()));
                for (i, value) in fields.iter().enumerate() {
                    self.out.push_str(if i == 0 { " " } else { ", " });
                    let field = class.and_then(|c| c.fields.get(i)).map_or("<invalid field>", |f| f.name.as_str());
                    let _ = write!(self.out, "{field}: ");
                    self.operand(f, value);
                }
                self.out.push_str(if fields.is_empty() { "}" } else { " }" });
            }
            OpKind::FieldGet { dest, object, field } | OpKind::FieldRef { dest, object, field, .. } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *object);
                let _ = write!(self.out, ", {}", self.field_name(f, *object, *field));
            }
            OpKind::FieldSet { object, field, value } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.local(f, *object);
                let _ = write!(self.out, ", {}, ", self.field_name(f, *object, *field));
                self.operand(f, value);
            }
            OpKind::ArrayNew { dest } | OpKind::MapNew { dest } | OpKind::OptionNone { dest } => {
                self.head(f, *dest, name)
            }
            OpKind::Copy { dest, src: x }
            | OpKind::ArrayLen { dest, array: x }
            | OpKind::MapLen { dest, map: x }
            | OpKind::StrLen { dest, string: x }
            | OpKind::OptionIsSome { dest, option: x }
            | OpKind::OptionUnwrap { dest, option: x }
            | OpKind::Move { dest, src: x }
            | OpKind::Clone { dest, src: x }
            | OpKind::Borrow { dest, src: x, .. }
            | OpKind::Load { dest, reference: x } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *x);
            }
            OpKind::ArrayGet { dest, array, index }
            | OpKind::ArrayRef { dest, array, index, .. }
            | OpKind::MapFind { dest, map: array, key: index }
            | OpKind::MapRemove { dest, map: array, key: index }
            | OpKind::MapRef { dest, map: array, index, .. } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *array);
                self.out.push_str(", ");
                self.operand(f, index);
            }
            OpKind::ArraySet { array, index, value } | OpKind::MapInsert { map: array, key: index, value } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.local(f, *array);
                self.out.push_str(", ");
                self.operands(f, &[*index, *value]);
            }
            OpKind::ArrayPush { array: target, value } | OpKind::Store { reference: target, value } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.local(f, *target);
                self.out.push_str(", ");
                self.operand(f, value);
            }
            OpKind::StringLit { dest, value } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                write_string_literal(&mut self.out, value);
            }
            OpKind::StrConcat { dest, parts } => {
                self.head(f, *dest, name);
                for (i, part) in parts.iter().enumerate() {
                    self.out.push_str(if i == 0 { " " } else { ", " });
                    match part {
                        StrPart::Local(local) => self.local(f, *local),
                        StrPart::Text(text) => write_string_literal(&mut self.out, text),
                    }
                }
            }
            OpKind::StrEq { dest, lhs, rhs } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *lhs);
                self.out.push_str(", ");
                self.local(f, *rhs);
            }
            OpKind::OptionSome { dest, value } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.operand(f, value);
            }
            OpKind::EnumNew { dest, enum_id, variant, payload } => {
                self.head(f, *dest, name);
                let data = m.enums.get(*enum_id);
                let enum_name = data.map_or("<invalid enum>", |e| e.name.as_str());
                let variant_name = data
                    .and_then(|e| e.variants.get(*variant as usize))
                    .map_or("<invalid variant>", |v| v.name.as_str());
                let _ = write!(self.out, " {enum_name}.{variant_name}");
                if let Some(payload) = payload {
                    self.out.push('(');
                    self.operand(f, payload);
                    self.out.push(')');
                }
            }
            OpKind::EnumIs { dest, value, variant }
            | OpKind::EnumGet { dest, value, variant }
            | OpKind::EnumRef { dest, value, variant } => {
                self.head(f, *dest, name);
                self.out.push(' ');
                self.local(f, *value);
                let _ = write!(self.out, ", {}", self.variant_name(f, *value, *variant));
            }
            OpKind::Drop { local } => {
                self.out.push_str(name);
                self.out.push(' ');
                self.local(f, *local);
            }
            _ => {}
        }
    }

    /// The name of field `field` of the class that `object`'s type (through a reference) is;
    /// a placeholder when the object is not a class, which the verifier reports.
    fn field_name(&self, f: &FunctionData, object: LocalId, field: u32) -> String {
        let ty = f.locals.get(object).map(|l| l.ty.through_ref().0.clone());
        if let Some(crate::types::Type::Class(c)) = ty
            && let Some(field) = self.module.classes.get(c).and_then(|c| c.fields.get(field as usize))
        {
            return field.name.clone();
        }
        format!("<field #{field}>")
    }

    /// The name of variant `variant` of the enum that `value`'s type (through a reference) is;
    /// a placeholder when the value is not an enum, which the verifier reports.
    fn variant_name(&self, f: &FunctionData, value: LocalId, variant: u32) -> String {
        let ty = f.locals.get(value).map(|l| l.ty.through_ref().0.clone());
        if let Some(crate::types::Type::Enum(e)) = ty
            && let Some(v) = self.module.enums.get(e).and_then(|e| e.variants.get(variant as usize))
        {
            return v.name.clone();
        }
        format!("<variant #{variant}>")
    }
}

//! Parsing of one function-body line: operands, constants, labels, and every operation's
//! text form (the counterpart of `printer.rs`'s `op_head`).

use super::{FnCtx, Frame, PResult, Parser, duplicate};
use crate::diagnostic::Diagnostic;
use crate::entities::{EnumId, FieldIndex, LabelId, LocalId, VariantIndex};
use crate::facts::{DestKind, Family};
use crate::lexer::TokenKind;
use crate::module::{BlockData, LabelData};
use crate::ops::{BinaryOp, OpKind, Opcode, Operand, StrPart, UnaryOp};
use crate::runtime::RuntimeFn;
use crate::source::Span;
use crate::types::{Constant, ScalarType, Type};

/// What precedes an operation's operands: its destination, `await` and mnemonic, read by
/// [`Parser::op`] before it hands the operands to the parser of the opcode's family.
#[derive(Clone, Copy)]
struct Head<'t> {
    dest: Option<LocalId>,
    awaited: bool,
    opcode: Opcode,
    mnemonic: &'t str,
    span: Span,
}

impl Head<'_> {
    /// The error for a mnemonic that names no operation (L112); a family's parser gives it for
    /// an opcode of another family, which [`Parser::op`] never hands it.
    fn unknown(&self) -> Diagnostic {
        unknown_operation(self.mnemonic, self.span)
    }
}

/// L112: `mnemonic` (at `span`) names no operation.
fn unknown_operation(mnemonic: &str, span: Span) -> Diagnostic {
    Diagnostic::new("L112", format!("unknown operation `{mnemonic}`"))
        .at(Some(span))
        .label("not a Low operation; docs/low.md lists them all")
}

impl Parser {
    pub(super) fn local_ref(&mut self, cx: &FnCtx) -> PResult<LocalId> {
        match self.peek().clone() {
            TokenKind::Local(name) => {
                let span = self.bump().span;
                cx.locals.get(&name).copied().ok_or_else(|| {
                    Diagnostic::new("L120", format!("unknown local `%{name}`"))
                        .at(Some(span))
                        .label("not a parameter and not declared with `let`")
                })
            }
            _ => Err(self.error("a local `%name`")),
        }
    }

    pub(super) fn operand(&mut self, cx: &FnCtx) -> PResult<Operand> {
        match self.peek().clone() {
            TokenKind::Local(_) => Ok(Operand::Local(self.local_ref(cx)?)),
            TokenKind::Number(_) | TokenKind::Ident(_) => Ok(Operand::Const(self.constant()?)),
            _ => Err(self.error("an operand (a local `%x` or a constant such as `1_i64`)")),
        }
    }

    pub(super) fn constant(&mut self) -> PResult<Constant> {
        let span = self.span();
        let text = match self.peek().clone() {
            TokenKind::Number(s) | TokenKind::Ident(s) => s,
            _ => return Err(self.error("a constant such as `1_i64`, `0.5_f64` or `true`")),
        };
        let value = match text.as_str() {
            "true" => Some(Constant::Bool(true)),
            "false" => Some(Constant::Bool(false)),
            "unit" => Some(Constant::Unit),
            _ => parse_number(&text),
        };
        match value {
            Some(c) => {
                self.bump();
                Ok(c)
            }
            None => {
                let (message, label) = match text.rsplit_once('_') {
                    Some((_, "i32" | "i64" | "f64")) => {
                        (format!("constant `{text}` is out of range or malformed"), "not a valid value of its type")
                    }
                    _ if matches!(self.peek(), TokenKind::Number(_)) => (
                        format!("constant `{text}` has no type suffix"),
                        "write the type after an underscore, e.g. `1_i64` or `0.5_f64`",
                    ),
                    _ => (format!("expected an operand, found `{text}`"), "not a local or a constant"),
                };
                Err(Diagnostic::new("L111", message).at(Some(span)).label(label))
            }
        }
    }

    pub(super) fn string(&mut self, what: &str) -> PResult<String> {
        match self.peek().clone() {
            TokenKind::Str(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.error(what)),
        }
    }

    pub(super) fn label_decl(&mut self, cx: &mut FnCtx) -> PResult<(String, LabelId)> {
        match self.peek().clone() {
            TokenKind::Label(name) => {
                let span = self.bump().span;
                if cx.data.labels.values().any(|l| l.name == name) {
                    return Err(duplicate("label", &format!("@{name}"), span));
                }
                let id = cx.data.labels.alloc(LabelData { name: name.clone() });
                Ok((name, id))
            }
            _ => Err(self.error("a label `@name`")),
        }
    }

    pub(super) fn label_use(&mut self, stack: &[Frame]) -> PResult<LabelId> {
        match self.peek().clone() {
            TokenKind::Label(name) => {
                let span = self.bump().span;
                let found = stack.iter().rev().find_map(|f| f.label.as_ref().filter(|(n, _)| *n == name));
                found.map(|(_, id)| *id).ok_or_else(|| {
                    Diagnostic::new("L124", format!("no enclosing loop or block is labelled `@{name}`"))
                        .at(Some(span))
                        .label("`break` and `continue` name a label of an enclosing `loop`, `for` or `block`")
                })
            }
            _ => Err(self.error("a label `@name`")),
        }
    }

    /// `$f(args)` of a `call`, a `scope.spawn`, an `actor.call` or an `actor.send`.
    fn callee_and_args(&mut self, cx: &FnCtx) -> PResult<(crate::entities::FuncId, Vec<Operand>)> {
        let (name, span) = match self.peek().clone() {
            TokenKind::Function(name) => (name, self.bump().span),
            _ => return Err(self.error("a function `$name`")),
        };
        let callee = self.function_id(&name, span)?;
        Ok((callee, self.args(cx)?))
    }

    pub(super) fn args(&mut self, cx: &FnCtx) -> PResult<Vec<Operand>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut args = Vec::new();
        while *self.peek() != TokenKind::RParen {
            if !args.is_empty() {
                self.expect(TokenKind::Comma, "`,` or `)`")?;
            }
            args.push(self.operand(cx)?);
        }
        self.bump();
        Ok(args)
    }

    /// The enum and variant of an `Enum.Variant` word.
    fn enum_variant(&self, path: &str, span: Span) -> PResult<(EnumId, VariantIndex)> {
        // The variant follows the last `.`: the enum's name may be qualified (`accounts.Role`).
        let Some((enum_name, variant)) = path.rsplit_once('.') else {
            return Err(Diagnostic::new("L110", format!("expected `Enum.Variant`, found `{path}`"))
                .at(Some(span))
                .label("name the enum and the variant"));
        };
        let &enum_id = self.enums.get(enum_name).ok_or_else(|| {
            Diagnostic::new("L121", format!("unknown enum `{enum_name}`")).at(Some(span)).label("no enum of this name")
        })?;
        let data = &self.module.enums[enum_id];
        let index = data.variant_index(variant).ok_or_else(|| {
            Diagnostic::new("L123", format!("enum {} has no variant `{variant}`", data.name))
                .at(Some(span))
                .label("unknown variant")
        })?;
        Ok((enum_id, index))
    }

    /// The variant `name` of the enum that `value`'s type is (through one reference).
    pub(super) fn variant(&mut self, cx: &FnCtx, value: LocalId) -> PResult<VariantIndex> {
        let (name, span) = self.ident("a variant name")?;
        let ty = cx.data.locals[value].ty.through_ref().0;
        let Type::Enum(id) = ty else {
            return Err(Diagnostic::new(
                "L123",
                format!(
                    "`%{}` has type {}, which has no variants",
                    cx.data.locals[value].name,
                    ty.display(&self.module)
                ),
            )
            .at(Some(span))
            .label("`enum.*` needs an enum or a reference to one"));
        };
        let data = &self.module.enums[*id];
        data.variant_index(&name).ok_or_else(|| {
            Diagnostic::new("L123", format!("enum {} has no variant `{name}`", data.name))
                .at(Some(span))
                .label("unknown variant")
        })
    }

    /// The field `name` of the class that `object`'s type is (through one reference).
    pub(super) fn field(&mut self, cx: &FnCtx, object: LocalId) -> PResult<FieldIndex> {
        let (name, span) = self.ident("a field name")?;
        let ty = cx.data.locals[object].ty.through_ref().0;
        let Type::Class(class) = ty else {
            return Err(Diagnostic::new(
                "L123",
                format!(
                    "`%{}` has type {}, which has no fields",
                    cx.data.locals[object].name,
                    ty.display(&self.module)
                ),
            )
            .at(Some(span))
            .label("field access needs a class or a reference to one"));
        };
        let class = &self.module.classes[*class];
        class.field_index(&name).ok_or_else(|| {
            Diagnostic::new("L123", format!("class {} has no field `{name}`", class.name))
                .at(Some(span))
                .label("unknown field")
        })
    }

    /// Parses one operation line, up to (not including) its `{` or end of line.
    pub(super) fn op(&mut self, cx: &mut FnCtx, stack: &[Frame]) -> PResult<(OpKind, Option<Opens>)> {
        let dest = if let TokenKind::Local(_) = self.peek() {
            let d = self.local_ref(cx)?;
            self.expect(TokenKind::Equals, "`=`")?;
            Some(d)
        } else {
            None
        };
        let awaited = self.is_keyword("await");
        if awaited {
            self.bump();
        }
        let (mnemonic, mspan) = self.ident("an operation")?;
        let unknown = || unknown_operation(&mnemonic, mspan);
        // Arithmetic mnemonics carry a scalar suffix: `add.i64`, `neg.f64`, `cast.i32`.
        if let Some((base, suffix)) = mnemonic.rsplit_once('.')
            && let Some(ty) = ScalarType::from_name(suffix)
        {
            let dest = self.need_dest(dest, &mnemonic, mspan)?;
            if let Some(op) = UnaryOp::from_name(base) {
                let arg = self.operand(cx)?;
                return Ok((OpKind::Unary { dest, op, ty, arg }, None));
            }
            if let Some(op) = BinaryOp::from_name(base) {
                let lhs = self.operand(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let rhs = self.operand(cx)?;
                return Ok((OpKind::Binary { dest, op, ty, lhs, rhs }, None));
            }
            if Opcode::from_name(base) == Some(Opcode::Cast) {
                let arg = self.operand(cx)?;
                return Ok((OpKind::Cast { dest, to: ty, arg }, None));
            }
            return Err(unknown());
        }
        let opcode = Opcode::from_name(&mnemonic).ok_or_else(unknown)?;
        let always_awaited = opcode.always_awaited();
        if awaited && !opcode.may_be_awaited() {
            return Err(Diagnostic::new(
                "L110",
                format!(
                    "`await` applies to `call`, `rtcall`, `scope.end`, `task.join`, `actor.call`, `actor.send` \
                     and `queue.push`, not `{mnemonic}`"
                ),
            )
            .at(Some(mspan))
            .label("only calls and joins are awaited"));
        }
        if always_awaited && !awaited {
            return Err(Diagnostic::new("L110", format!("`{mnemonic}` waits, so it is written `await {mnemonic}`"))
                .at(Some(mspan))
                .label("add `await` before it"));
        }
        let no_dest = opcode.dest_kind() == DestKind::None;
        if no_dest && dest.is_some() {
            return Err(Diagnostic::new("L110", format!("`{mnemonic}` has no result to assign"))
                .at(Some(mspan))
                .label("remove the `%x =` before it"));
        }
        let head = Head { dest, awaited, opcode, mnemonic: &mnemonic, span: mspan };
        let kind = match opcode.family() {
            Family::Call | Family::Async => self.call_op(cx, &head)?,
            Family::Object | Family::Enum => self.object_op(cx, &head)?,
            Family::Control => return self.control_op(cx, stack, &head),
            _ => self.value_op(cx, &head)?,
        };
        Ok((kind, None))
    }

    /// The operands of a call or an async operation: a callee and arguments, a scope, a task,
    /// an actor, a queue or a supervisor path.
    fn call_op(&mut self, cx: &mut FnCtx, head: &Head) -> PResult<OpKind> {
        let Head { dest, awaited, opcode, mnemonic, span: mspan, .. } = *head;
        let d = || self.need_dest(dest, mnemonic, mspan);
        Ok(match opcode {
            Opcode::Call => {
                let (callee, args) = self.callee_and_args(cx)?;
                OpKind::Call { dest, callee, args, awaited }
            }
            Opcode::RuntimeCall => {
                let (name, span) = self.ident("a runtime function name such as `print.i64`")?;
                let func = RuntimeFn::from_name(&name).ok_or_else(|| {
                    Diagnostic::new("L125", format!("unknown runtime function `{name}`"))
                        .at(Some(span))
                        .label("not in the runtime interface table (low/src/runtime.rs)")
                })?;
                let class = if *self.peek() == TokenKind::Lt {
                    self.bump();
                    let (cname, cspan) = self.ident("a class name")?;
                    let c = self.class_id(&cname, cspan)?;
                    self.expect(TokenKind::Gt, "`>`")?;
                    Some(c)
                } else {
                    None
                };
                let args = self.args(cx)?;
                OpKind::RuntimeCall { dest, func, class, args, awaited }
            }
            Opcode::ScopeNew => OpKind::ScopeNew { dest: d()? },
            Opcode::ScopeSpawn | Opcode::ScopeSpawnBlocking => {
                let dest = d()?;
                let scope = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let (callee, args) = self.callee_and_args(cx)?;
                OpKind::ScopeSpawn { dest, scope, callee, args, blocking: opcode == Opcode::ScopeSpawnBlocking }
            }
            Opcode::DeferNew => {
                let dest = d()?;
                let (callee, args) = self.callee_and_args(cx)?;
                OpKind::DeferNew { dest, callee, args }
            }
            Opcode::ScopeEnd => OpKind::ScopeEnd { scope: self.local_ref(cx)? },
            Opcode::TaskJoin => OpKind::TaskJoin { dest, task: self.local_ref(cx)? },
            Opcode::ActorStart => {
                let dest = d()?;
                let init = match self.peek().clone() {
                    TokenKind::Function(name) => {
                        let span = self.bump().span;
                        self.function_id(&name, span)?
                    }
                    _ => return Err(self.error("the state's function `$init`")),
                };
                self.expect(TokenKind::Comma, "`,`")?;
                if !self.is_keyword("mailbox") {
                    return Err(self.error("`mailbox` and the mailbox's capacity"));
                }
                self.bump();
                let capacity = match self.peek().clone() {
                    TokenKind::Number(text) => text.parse::<u32>().ok(),
                    _ => None,
                }
                .ok_or_else(|| self.error("the mailbox's capacity, a number of messages such as `64`"))?;
                self.bump();
                OpKind::ActorStart { dest, init, capacity }
            }
            Opcode::QueuePush => {
                let (name, span) = self.ident("a queue name")?;
                let queue = self.module.queue_by_name(&name).ok_or_else(|| {
                    Diagnostic::new("L122", format!("unknown queue `{name}`"))
                        .at(Some(span))
                        .label("no queue of this name in the module (a queue is declared before the functions)")
                })?;
                self.expect(TokenKind::Comma, "`,`")?;
                let job = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let delay = self.operand(cx)?;
                OpKind::QueuePush { dest, queue, job, delay }
            }
            Opcode::SupervisorChild => {
                let dest = d()?;
                let (tree_name, span) = self.ident("a supervisor name")?;
                let tree = self.module.supervisor_by_name(&tree_name).ok_or_else(|| {
                    Diagnostic::new("L122", format!("unknown supervisor `{tree_name}`"))
                        .at(Some(span))
                        .label("no supervisor of this name in the module")
                })?;
                let mut path = Vec::new();
                let mut at = tree;
                while *self.peek() == TokenKind::Comma {
                    self.bump();
                    let (child, span) = self.ident("a child name")?;
                    let supervisor = &self.module.supervisors[at];
                    let index = supervisor.children.iter().position(|c| c.name == child).ok_or_else(|| {
                        Diagnostic::new("L122", format!("supervisor `{}` has no child `{child}`", supervisor.name))
                            .at(Some(span))
                            .label("no child of this name")
                    })?;
                    path.push(index as u32);
                    match supervisor.children[index].kind {
                        crate::module::ChildKind::Supervisor(nested) => at = nested,
                        // An actor ends the path; a step after it is reported by the verifier.
                        crate::module::ChildKind::Actor { .. } => {}
                    }
                }
                OpKind::SupervisorChild { dest, tree, path }
            }
            Opcode::ActorCall | Opcode::ActorSend => {
                let actor = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let (handler, args) = self.callee_and_args(cx)?;
                if opcode == Opcode::ActorCall {
                    OpKind::ActorCall { dest, actor, handler, args }
                } else {
                    OpKind::ActorSend { actor, handler, args }
                }
            }
            _ => return Err(head.unknown()),
        })
    }

    /// The operands of `new`, `field.*` and `enum.*`, whose field and variant names are looked
    /// up in the module.
    fn object_op(&mut self, cx: &mut FnCtx, head: &Head) -> PResult<OpKind> {
        let Head { dest, opcode, mnemonic, span: mspan, .. } = *head;
        let d = || self.need_dest(dest, mnemonic, mspan);
        Ok(match opcode {
            Opcode::New => {
                let dest = d()?;
                let (cname, cspan) = self.ident("a class name")?;
                let class = self.class_id(&cname, cspan)?;
                self.expect(TokenKind::LBrace, "`{`")?;
                let mut fields = Vec::new();
                let field_count = self.module.classes[class].fields.len();
                while *self.peek() != TokenKind::RBrace {
                    if !fields.is_empty() {
                        self.expect(TokenKind::Comma, "`,` or `}`")?;
                    }
                    let (fname, fspan) = self.ident("a field name")?;
                    let expected = self.module.classes[class].fields.get(fields.len()).map(|f| f.name.clone());
                    if expected.as_deref() != Some(fname.as_str()) {
                        let message = match expected {
                            Some(e) => format!("expected field `{e}` of class {cname} here, found `{fname}`"),
                            None => format!("class {cname} has only {field_count} fields, found `{fname}`"),
                        };
                        return Err(Diagnostic::new("L123", message)
                            .at(Some(fspan))
                            .label("`new` lists every field once, in declaration order"));
                    }
                    self.expect(TokenKind::Colon, "`:`")?;
                    fields.push(self.operand(cx)?);
                }
                let close = self.bump().span;
                if fields.len() != field_count {
                    let missing = &self.module.classes[class].fields[fields.len()].name;
                    return Err(Diagnostic::new("L123", format!("`new {cname}` is missing field `{missing}`"))
                        .at(Some(close))
                        .label("`new` lists every field once, in declaration order"));
                }
                OpKind::New { dest, class, fields }
            }
            Opcode::FieldGet | Opcode::FieldRef | Opcode::FieldRefMut => {
                let dest = d()?;
                let object = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let field = self.field(cx, object)?;
                match opcode {
                    Opcode::FieldGet => OpKind::FieldGet { dest, object, field },
                    _ => OpKind::FieldRef { dest, object, field, mutable: opcode == Opcode::FieldRefMut },
                }
            }
            Opcode::FieldSet => {
                let object = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let field = self.field(cx, object)?;
                self.expect(TokenKind::Comma, "`,`")?;
                OpKind::FieldSet { object, field, value: self.operand(cx)? }
            }
            Opcode::EnumNew => {
                let dest = d()?;
                let (path, span) = self.ident("`Enum.Variant`")?;
                let (enum_id, variant) = self.enum_variant(&path, span)?;
                let payload = if *self.peek() == TokenKind::LParen {
                    self.bump();
                    let payload = self.operand(cx)?;
                    self.expect(TokenKind::RParen, "`)`")?;
                    Some(payload)
                } else {
                    None
                };
                OpKind::EnumNew { dest, enum_id, variant, payload }
            }
            Opcode::EnumIs | Opcode::EnumGet | Opcode::EnumRef => {
                let dest = d()?;
                let value = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let variant = self.variant(cx, value)?;
                match opcode {
                    Opcode::EnumIs => OpKind::EnumIs { dest, value, variant },
                    Opcode::EnumGet => OpKind::EnumGet { dest, value, variant },
                    _ => OpKind::EnumRef { dest, value, variant },
                }
            }
            _ => return Err(head.unknown()),
        })
    }

    /// The operands of control flow; `if`, `loop`, `block` and `for` allocate their first block
    /// and say what they open.
    fn control_op(&mut self, cx: &mut FnCtx, stack: &[Frame], head: &Head) -> PResult<(OpKind, Option<Opens>)> {
        let Head { opcode, span: mspan, .. } = *head;
        let kind = match opcode {
            Opcode::If => {
                let cond = self.operand(cx)?;
                let then_block = cx.data.blocks.alloc(BlockData::default());
                return Ok((OpKind::If { cond, then_block, else_block: None }, Some(Opens::If)));
            }
            Opcode::Loop | Opcode::Block => {
                let (name, label) = self.label_decl(cx)?;
                let body = cx.data.blocks.alloc(BlockData::default());
                let kind = match opcode {
                    Opcode::Loop => OpKind::Loop { label, body },
                    _ => OpKind::Block { label, body },
                };
                return Ok((kind, Some(Opens::Labelled(name, label))));
            }
            Opcode::For => {
                let var = self.local_ref(cx)?;
                self.keyword("in")?;
                let first = self.operand(cx)?;
                let range_end = if *self.peek() == TokenKind::DotDot {
                    self.bump();
                    Some(self.operand(cx)?)
                } else {
                    None
                };
                let (name, label) = self.label_decl(cx)?;
                let body = cx.data.blocks.alloc(BlockData::default());
                let kind = match (range_end, first) {
                    (Some(end), start) => OpKind::ForRange { var, start, end, label, body },
                    (None, Operand::Local(seq)) => OpKind::ForEach { var, seq, label, body },
                    (None, Operand::Const(_)) => {
                        return Err(Diagnostic::new("L110", "`for` over a constant")
                            .at(Some(mspan))
                            .label("write a range `a..b` or a local holding an array"));
                    }
                };
                return Ok((kind, Some(Opens::Labelled(name, label))));
            }
            Opcode::Break => OpKind::Break { label: self.label_use(stack)? },
            Opcode::Continue => OpKind::Continue { label: self.label_use(stack)? },
            Opcode::Return => {
                let value = match self.peek() {
                    TokenKind::Newline | TokenKind::Eof | TokenKind::Comment(_) | TokenKind::RBrace => None,
                    _ => Some(self.operand(cx)?),
                };
                OpKind::Return { value }
            }
            Opcode::Trap => OpKind::Trap { message: self.string("the trap's message as a string literal")? },
            _ => return Err(head.unknown()),
        };
        Ok((kind, None))
    }

    /// The operands of the other operations: scalars, arrays, maps, strings, options and
    /// ownership.
    fn value_op(&mut self, cx: &mut FnCtx, head: &Head) -> PResult<OpKind> {
        let Head { dest, opcode, mnemonic, span: mspan, .. } = *head;
        let d = || self.need_dest(dest, mnemonic, mspan);
        Ok(match opcode {
            Opcode::Const => OpKind::Const { dest: d()?, value: self.constant()? },
            Opcode::Copy => OpKind::Copy { dest: d()?, src: self.local_ref(cx)? },
            Opcode::Cast => {
                return Err(Diagnostic::new("L110", "`cast` needs the target type as a suffix")
                    .at(Some(mspan))
                    .label("e.g. `cast.f64 %x`"));
            }
            Opcode::ArrayNew => OpKind::ArrayNew { dest: d()? },
            Opcode::OptionNone => OpKind::OptionNone { dest: d()? },
            Opcode::ArrayLen => OpKind::ArrayLen { dest: d()?, array: self.local_ref(cx)? },
            Opcode::StrLen => OpKind::StrLen { dest: d()?, string: self.local_ref(cx)? },
            Opcode::OptionIsSome => OpKind::OptionIsSome { dest: d()?, option: self.local_ref(cx)? },
            Opcode::OptionUnwrap => OpKind::OptionUnwrap { dest: d()?, option: self.local_ref(cx)? },
            Opcode::Move => OpKind::Move { dest: d()?, src: self.local_ref(cx)? },
            Opcode::Clone => OpKind::Clone { dest: d()?, src: self.local_ref(cx)? },
            Opcode::Borrow | Opcode::BorrowMut => {
                OpKind::Borrow { dest: d()?, src: self.local_ref(cx)?, mutable: opcode == Opcode::BorrowMut }
            }
            Opcode::Load => OpKind::Load { dest: d()?, reference: self.local_ref(cx)? },
            Opcode::ArrayGet | Opcode::ArrayRef | Opcode::ArrayRefMut => {
                let dest = d()?;
                let array = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let index = self.operand(cx)?;
                match opcode {
                    Opcode::ArrayGet => OpKind::ArrayGet { dest, array, index },
                    _ => OpKind::ArrayRef { dest, array, index, mutable: opcode == Opcode::ArrayRefMut },
                }
            }
            Opcode::MapNew => OpKind::MapNew { dest: d()? },
            Opcode::MapLen => OpKind::MapLen { dest: d()?, map: self.local_ref(cx)? },
            Opcode::MapFind | Opcode::MapRemove | Opcode::MapKeyRef | Opcode::MapValueRef => {
                let dest = d()?;
                let map = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let operand = self.operand(cx)?;
                match opcode {
                    Opcode::MapFind => OpKind::MapFind { dest, map, key: operand },
                    Opcode::MapRemove => OpKind::MapRemove { dest, map, key: operand },
                    _ => OpKind::MapRef { dest, map, index: operand, value: opcode == Opcode::MapValueRef },
                }
            }
            Opcode::MapInsert => {
                let map = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let key = self.operand(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                OpKind::MapInsert { map, key, value: self.operand(cx)? }
            }
            Opcode::ArraySet => {
                let array = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let index = self.operand(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                OpKind::ArraySet { array, index, value: self.operand(cx)? }
            }
            Opcode::ArrayPush | Opcode::Store => {
                let target = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let value = self.operand(cx)?;
                match opcode {
                    Opcode::ArrayPush => OpKind::ArrayPush { array: target, value },
                    _ => OpKind::Store { reference: target, value },
                }
            }
            Opcode::String => OpKind::StringLit { dest: d()?, value: self.string("a string literal")? },
            Opcode::StrConcat => {
                let dest = d()?;
                let mut parts = Vec::new();
                loop {
                    let part = if matches!(self.peek(), TokenKind::Str(_)) {
                        StrPart::Text(self.string("a string literal or a local")?)
                    } else {
                        StrPart::Local(self.local_ref(cx)?)
                    };
                    parts.push(part);
                    if *self.peek() != TokenKind::Comma {
                        break;
                    }
                    self.bump();
                }
                OpKind::StrConcat { dest, parts }
            }
            Opcode::StrEq => {
                let dest = d()?;
                let lhs = self.local_ref(cx)?;
                self.expect(TokenKind::Comma, "`,`")?;
                let rhs = self.local_ref(cx)?;
                OpKind::StrEq { dest, lhs, rhs }
            }
            Opcode::OptionSome => OpKind::OptionSome { dest: d()?, value: self.operand(cx)? },
            Opcode::Drop => OpKind::Drop { local: self.local_ref(cx)? },
            _ => return Err(head.unknown()),
        })
    }

    pub(super) fn need_dest(&self, dest: Option<LocalId>, mnemonic: &str, span: Span) -> PResult<LocalId> {
        dest.ok_or_else(|| {
            Diagnostic::new("L110", format!("`{mnemonic}` produces a value; assign it to a local"))
                .at(Some(span))
                .label(format!("write `%x = {mnemonic} …`"))
        })
    }
}

/// What kind of block an operation opens after its head line.
pub(super) enum Opens {
    If,
    Labelled(String, LabelId),
}

/// Reads a suffixed number: `5_i64`, `-1_i32`, `0.5_f64`, `1e21_f64`, `-inf_f64`, and the
/// bare words `NaN_f64` and `inf_f64`. Digit separators `_` inside the digits are allowed.
pub(super) fn parse_number(text: &str) -> Option<Constant> {
    let (digits, suffix) = text.rsplit_once('_')?;
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    match suffix {
        "i32" => digits.parse().ok().map(Constant::I32),
        "i64" => digits.parse().ok().map(Constant::I64),
        "f64" => {
            // Rust's parser also takes `infinity` and `+1`; Low takes only what the printer
            // writes (and plain decimal forms of it), so there is one spelling per value.
            let body = digits.strip_prefix('-').unwrap_or(&digits);
            let ok = body == "inf"
                || (digits == "NaN")
                || body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
            if !ok || body.is_empty() {
                return None;
            }
            // A finite spelling that overflows to infinity is out of range, like an integer.
            let value = digits.parse::<f64>().ok()?;
            if value.is_infinite() && body != "inf" {
                return None;
            }
            Some(Constant::F64(value))
        }
        _ => None,
    }
}

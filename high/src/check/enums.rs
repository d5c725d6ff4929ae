//! Enums in bodies: variant values (`Role.Admin`, `Role.Member(5)`) and `match`, with its
//! pattern checks, the borrow guard of its bindings and the exhaustiveness rule.

use nagi_syntax::ast::{self, Span};

use super::expr::mk;
use super::{Body, H301, H303, H307, H316, H317, H318, H319, error, plural};
use crate::tir::{EnumIdx, ExprKind, LocalKind, MatchArm, Pattern, Place, StmtKind, Ty};

/// What a `match` inspects, decided by the scrutinee's type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subject {
    Enum(EnumIdx),
    Int(bool),
    Str,
    Bool,
}

impl Body<'_, '_> {
    /// The enum a name refers to, when it is written as a value (`Role` in `Role.Admin`) and no
    /// local of that name hides it.
    pub(super) fn enum_named(&self, e: &ast::Expr) -> Option<EnumIdx> {
        let ast::ExprKind::Name(id) = &e.kind else { return None };
        if self.lookup(&id.name).is_some() {
            return None;
        }
        self.items.enum_by_name.get(&id.name).copied()
    }

    /// `Enum.Variant` (`args` is `None`) or `Enum.Variant(payload)`.
    pub(super) fn variant_value(
        &mut self,
        enum_idx: EnumIdx,
        variant: &ast::Ident,
        args: Option<&[ast::Expr]>,
        span: Span,
    ) -> Option<crate::tir::Expr> {
        let enum_name = self.items.ty_name(&Ty::Enum(enum_idx));
        let Some(index) = self.items.variant_index(enum_idx, &variant.name) else {
            for arg in args.unwrap_or(&[]) {
                self.infer(arg, None);
            }
            let list = self.items.variant_list(enum_idx);
            self.report(
                error(
                    H317,
                    variant.span,
                    format!("enum `{enum_name}` has no variant `{}`", variant.name),
                    "unknown variant",
                )
                .note(list),
            );
            return None;
        };
        let payload_ty = self.items.enum_at(enum_idx)?.variants[index as usize].payload.clone();
        let payload = match (payload_ty, args) {
            (None, None) => None,
            (Some(Some(ty)), Some([arg])) => Some(Box::new(self.check_expr(arg, &ty)?)),
            (Some(None), _) => return None,
            (Some(Some(ty)), given) => {
                let count = given.map_or(0, <[_]>::len);
                for arg in given.unwrap_or(&[]) {
                    self.infer(arg, None);
                }
                let name = self.ty_name(&ty);
                self.report(
                    error(
                        H307,
                        span,
                        format!(
                            "`{enum_name}.{}` carries {} `{name}`, but {} given",
                            variant.name,
                            super::a_or_an(&name),
                            if count == 0 { "none is".to_string() } else { format!("{} are", plural(count, "value")) }
                        ),
                        "wrong number of values",
                    )
                    .note(format!("write `{enum_name}.{}(value)`", variant.name)),
                );
                return None;
            }
            (None, Some(given)) => {
                for arg in given {
                    self.infer(arg, None);
                }
                self.report(
                    error(
                        H307,
                        span,
                        format!("`{enum_name}.{}` carries no value", variant.name),
                        "no value is taken here",
                    )
                    .note(format!("write `{enum_name}.{}` without parentheses", variant.name)),
                );
                return None;
            }
        };
        Some(mk(ExprKind::Variant { enum_idx, variant: index, payload }, Ty::Enum(enum_idx), span))
    }

    /// `match scrutinee { arms }`.
    pub(super) fn match_stmt(&mut self, scrutinee: &ast::Expr, arms: &[ast::MatchArm], span: Span) -> Option<StmtKind> {
        let value = self.infer_value(scrutinee, None);
        let subject = match value.as_ref().map(|v| &v.ty) {
            Some(Ty::Enum(e)) => Some(Subject::Enum(*e)),
            Some(Ty::I32) => Some(Subject::Int(false)),
            Some(Ty::I64) => Some(Subject::Int(true)),
            Some(Ty::String) => Some(Subject::Str),
            Some(Ty::Bool) => Some(Subject::Bool),
            Some(other) => {
                let name = self.ty_name(other);
                self.report(
                    error(H316, scrutinee.span, format!("cannot `match` on `{name}`"), format!("this is `{name}`"))
                        .note(
                            "`match` takes an enum, an integer, a `String` or a `bool`; unwrap an option with `if let`",
                        ),
                );
                None
            }
            None => None,
        };
        // While an arm borrows a payload of a place, that place must not change.
        let place = match value.as_ref().map(|v| &v.kind) {
            Some(ExprKind::Place(place)) => Some(place.clone()),
            _ => None,
        };
        let mut checked = Vec::with_capacity(arms.len());
        let mut covered = Coverage::default();
        let mut ok = subject.is_some();
        for arm in arms {
            match self.match_arm(arm, subject, place.as_ref(), &mut covered) {
                Some(arm) => checked.push(arm),
                None => ok = false,
            }
        }
        if let (Some(subject), true) = (subject, ok) {
            ok = self.exhaustive(subject, &covered, span);
        }
        (ok && value.is_some()).then(|| StmtKind::Match { scrutinee: value.expect("checked"), arms: checked })
    }

    /// One arm: its patterns, its binding (declared in the arm's scope) and its block.
    fn match_arm(
        &mut self,
        arm: &ast::MatchArm,
        subject: Option<Subject>,
        place: Option<&Place>,
        covered: &mut Coverage,
    ) -> Option<MatchArm> {
        let mut patterns = Vec::with_capacity(arm.patterns.len());
        let mut ok = true;
        let mut binding: Option<(&ast::Ident, Option<Ty>)> = None;
        for pattern in &arm.patterns {
            let Some(subject) = subject else { continue };
            match self.pattern(pattern, subject, arm.patterns.len() > 1, covered) {
                Some((checked, bound)) => {
                    if bound.is_some() {
                        binding = bound;
                    }
                    patterns.push(checked);
                }
                None => ok = false,
            }
        }
        self.open_scope();
        let mut local = None;
        let mut guarded = false;
        if let Some((name, ty)) = binding {
            let borrowed = ty.as_ref().is_some_and(|t| !t.is_copy());
            local = Some(self.declare(name, ty, false, LocalKind::MatchBinding));
            if let (true, Some(place)) = (borrowed, place) {
                let text = self.place_text(place);
                self.iterating.push((place.clone(), text, true));
                guarded = true;
            }
        }
        let body = self.stmts(&arm.body);
        if guarded {
            self.iterating.pop();
        }
        self.close_scope();
        ok.then_some(MatchArm { patterns, binding: local, body })
    }

    /// One pattern against the subject; a variant pattern's binding comes back with its type
    /// (`None` when the payload's type failed to resolve).
    fn pattern<'p>(
        &mut self,
        pattern: &'p ast::Pattern,
        subject: Subject,
        alternatives: bool,
        covered: &mut Coverage,
    ) -> Option<(Pattern, Option<(&'p ast::Ident, Option<Ty>)>)> {
        let span = pattern.span;
        if covered.wildcard {
            self.report(
                error(H318, span, "this pattern is unreachable", "never reached")
                    .note("an earlier `_` matches every value"),
            );
            return None;
        }
        let checked = match (&pattern.kind, subject) {
            (ast::PatternKind::Wildcard, _) => {
                covered.wildcard = true;
                return Some((Pattern::Wildcard, None));
            }
            (ast::PatternKind::Variant { enum_name, variant, binding }, Subject::Enum(e)) => {
                return self.variant_pattern(
                    e,
                    enum_name.as_ref(),
                    variant,
                    binding.as_ref(),
                    alternatives,
                    covered,
                    span,
                );
            }
            (ast::PatternKind::Int { negative, magnitude }, Subject::Int(wide)) => {
                let value = if *negative { -i128::from(*magnitude) } else { i128::from(*magnitude) };
                let (min, max, name) = if wide {
                    (i128::from(i64::MIN), i128::from(i64::MAX), "i64")
                } else {
                    (i128::from(i32::MIN), i128::from(i32::MAX), "i32")
                };
                if value < min || value > max {
                    self.report(
                        error(
                            H303,
                            span,
                            format!("the integer literal `{value}` does not fit in `{name}`"),
                            "out of range",
                        )
                        .note(format!("`{name}` holds {min} to {max}")),
                    );
                    return None;
                }
                Pattern::Int(value as i64)
            }
            (ast::PatternKind::Str(s), Subject::Str) => Pattern::Str(s.clone()),
            (ast::PatternKind::Bool(b), Subject::Bool) => Pattern::Bool(*b),
            (kind, subject) => {
                let found = match kind {
                    ast::PatternKind::Variant { .. } => "an enum variant",
                    ast::PatternKind::Int { .. } => "an integer",
                    ast::PatternKind::Str(_) => "a string",
                    _ => "a `bool`",
                };
                let wanted = match subject {
                    Subject::Enum(e) => format!("`{}`", self.items.ty_name(&Ty::Enum(e))),
                    Subject::Int(true) => "`i64`".into(),
                    Subject::Int(false) => "`i32`".into(),
                    Subject::Str => "`String`".into(),
                    Subject::Bool => "`bool`".into(),
                };
                self.report(error(
                    H301,
                    span,
                    format!("mismatched types: this pattern is {found}, but the value matched is {wanted}"),
                    format!("{found} pattern"),
                ));
                return None;
            }
        };
        if covered.literals.contains(&checked) {
            self.report(
                error(H318, span, "this pattern is unreachable", "never reached")
                    .note("an earlier arm matches the same value"),
            );
            return None;
        }
        covered.literals.push(checked.clone());
        Some((checked, None))
    }

    /// A variant pattern of enum `e`: the variant exists, an enum name written before it is the
    /// subject's, and a binding is given exactly when the variant carries a payload.
    #[allow(clippy::too_many_arguments)]
    fn variant_pattern<'p>(
        &mut self,
        e: EnumIdx,
        enum_name: Option<&ast::Ident>,
        variant: &ast::Ident,
        binding: Option<&'p ast::Ident>,
        alternatives: bool,
        covered: &mut Coverage,
        span: Span,
    ) -> Option<(Pattern, Option<(&'p ast::Ident, Option<Ty>)>)> {
        let name = self.items.ty_name(&Ty::Enum(e));
        // A `Result<T>`'s variants are written `Result.Ok(…)` whatever its `T`.
        let written_name = self.items.enum_written_name(e);
        if let Some(written) = enum_name
            && written.name != written_name
        {
            self.report(error(
                H301,
                written.span,
                format!(
                    "mismatched types: this pattern is a variant of `{}`, but the value matched is `{name}`",
                    written.name
                ),
                "another enum",
            ));
            return None;
        }
        let Some(index) = self.items.variant_index(e, &variant.name) else {
            let list = self.items.variant_list(e);
            self.report(
                error(
                    H317,
                    variant.span,
                    format!("enum `{name}` has no variant `{}`", variant.name),
                    "unknown variant",
                )
                .note(list),
            );
            return None;
        };
        let payload = self.items.enum_at(e)?.variants[index as usize].payload.clone();
        let bound = match (&payload, binding) {
            (None, None) => None,
            (None, Some(b)) => {
                self.report(
                    error(
                        H317,
                        b.span,
                        format!("`{name}.{}` carries no value to bind", variant.name),
                        "nothing to bind",
                    )
                    .note(format!("write `{}` without parentheses", variant.name)),
                );
                return None;
            }
            (Some(ty), None) => {
                let ty_name = ty.as_ref().map_or_else(
                    || "a value".to_string(),
                    |t| {
                        let t = self.ty_name(t);
                        format!("{} `{t}`", super::a_or_an(&t))
                    },
                );
                self.report(
                    error(
                        H317,
                        span,
                        format!("`{name}.{}` carries {ty_name}; the pattern must bind or ignore it", variant.name),
                        "payload not named",
                    )
                    .note(format!("write `{}(x)` to use it, or `{}(_)` to ignore it", variant.name, variant.name)),
                );
                return None;
            }
            (Some(_), Some(b)) if b.name == "_" => None,
            (Some(_), Some(b)) if alternatives => {
                self.report(
                    error(H317, b.span, "a pattern with `|` cannot bind a name", "binding in an alternative")
                        .note("give the variant an arm of its own, or write `_` instead of the name"),
                );
                return None;
            }
            (Some(ty), Some(b)) => Some((b, ty.clone())),
        };
        if covered.variants.contains(&index) {
            self.report(
                error(H318, span, "this pattern is unreachable", "never reached")
                    .note(format!("an earlier arm already matches `{name}.{}`", variant.name)),
            );
            return None;
        }
        covered.variants.push(index);
        Some((Pattern::Variant(index), bound))
    }

    /// Whether the arms cover every value of the subject; reports the missing ones.
    fn exhaustive(&mut self, subject: Subject, covered: &Coverage, span: Span) -> bool {
        if covered.wildcard {
            return true;
        }
        let head = Span { start: span.start, end: span.start + "match".len() as u32 };
        match subject {
            Subject::Enum(e) => {
                let data = self.items.enum_at(e).expect("an enum");
                let missing: Vec<String> = data
                    .variants
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !covered.variants.contains(&(*i as u32)))
                    .map(
                        |(_, v)| if v.payload.is_some() { format!("`{}(_)`", v.name) } else { format!("`{}`", v.name) },
                    )
                    .collect();
                if missing.is_empty() {
                    return true;
                }
                let name = data.name.clone();
                let list = join_and(&missing);
                self.report(
                    error(
                        H319,
                        head,
                        format!("`match` on `{name}` does not cover {list}"),
                        format!("{} not covered", plural(missing.len(), "variant")),
                    )
                    .note("add an arm for each, or a `_` arm for the rest"),
                );
                false
            }
            Subject::Bool
                if covered.literals.contains(&Pattern::Bool(true))
                    && covered.literals.contains(&Pattern::Bool(false)) =>
            {
                true
            }
            _ => {
                let what = match subject {
                    Subject::Int(true) => "`i64`",
                    Subject::Int(false) => "`i32`",
                    Subject::Str => "`String`",
                    _ => "`bool`",
                };
                self.report(
                    error(H319, head, format!("`match` on {what} does not cover every value"), "no `_` arm")
                        .note("add a last arm `_ => { … }` for the values no pattern names"),
                );
                false
            }
        }
    }
}

/// What the arms checked so far match.
#[derive(Default)]
struct Coverage {
    wildcard: bool,
    variants: Vec<u32>,
    literals: Vec<Pattern>,
}

/// "`A`", "`A` and `B`", "`A`, `B` and `C`".
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

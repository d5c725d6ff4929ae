//! Supervisors as items: each supervisor's restart rules (with their defaults) and children,
//! which are actors or other supervisors named by type; each supervisor has at most one
//! parent and no supervisor is its own ancestor, so they form trees.

use super::*;
use crate::check::H419;
use crate::tir::SupervisedChild;

/// Restarts allowed per period when a supervisor does not say: 3 per 5 s.
const DEFAULT_INTENSITY: (u32, u64) = (3, 5000);

/// The backoff when a supervisor does not say: 10 ms doubling up to 1 s.
const DEFAULT_BACKOFF: (u64, u64) = (10, 1000);

/// A supervisor, checked: what the TIR gets, and its place in its tree.
pub(crate) struct SupervisorInfo {
    pub decl: tir::Supervisor,
    /// The supervisor this one is a child of, and its position there.
    pub parent: Option<(usize, u32)>,
}

impl Items<'_> {
    /// Collects the supervisors, once the actors are known.
    pub(super) fn collect_supervisors(&mut self, decls: &[&ast::SupervisorDecl], diags: &mut Vec<Diagnostic>) {
        for decl in decls {
            let name = &decl.name.name;
            if self.class_by_name.contains_key(name)
                || self.enum_by_name.contains_key(name)
                || self.supervisor_by_name.contains_key(name)
            {
                diags.push(error(H205, decl.name.span, format!("`{name}` is declared twice"), "declared again here"));
                continue;
            }
            self.supervisor_by_name.insert(name.clone(), self.supervisors.len());
            let decl = tir::Supervisor {
                name: name.clone(),
                strategy: nagi_low::Strategy::OneForOne,
                intensity: DEFAULT_INTENSITY.0,
                period_ms: DEFAULT_INTENSITY.1,
                backoff_ms: DEFAULT_BACKOFF,
                children: Vec::new(),
            };
            self.supervisors.push(SupervisorInfo { decl, parent: None });
        }
        for decl in decls {
            let Some(&index) = self.supervisor_by_name.get(&decl.name.name) else { continue };
            self.resolve_supervisor(decl, index, diags);
        }
        for (index, decl) in decls.iter().enumerate() {
            if self.supervisor_by_name.get(&decl.name.name) == Some(&index) && self.is_own_ancestor(index) {
                diags.push(error(
                    H419,
                    decl.name.span,
                    format!("supervisor `{}` supervises itself, through its children", decl.name.name),
                    "a cycle",
                ));
            }
        }
    }

    fn resolve_supervisor(&mut self, decl: &ast::SupervisorDecl, index: usize, diags: &mut Vec<Diagnostic>) {
        if let Some(strategy) = &decl.strategy {
            self.supervisors[index].decl.strategy = match strategy.name.as_str() {
                "one_for_one" => nagi_low::Strategy::OneForOne,
                "one_for_all" => nagi_low::Strategy::OneForAll,
                other => {
                    diags.push(
                        error(H419, strategy.span, format!("unknown strategy `{other}`"), "not a strategy")
                            .note("a supervisor restarts `one_for_one` (the crashed child) or `one_for_all`"),
                    );
                    nagi_low::Strategy::OneForOne
                }
            };
        }
        if let Some((n, period, span)) = decl.intensity {
            match u32::try_from(n) {
                Ok(n) if period > 0 => {
                    (self.supervisors[index].decl.intensity, self.supervisors[index].decl.period_ms) = (n, period)
                }
                _ => diags.push(error(H419, span, "an intensity of too many restarts, or per no time", "out of range")),
            }
        }
        if let Some((min, max, span)) = decl.backoff {
            if min > max {
                diags.push(error(H419, span, "the backoff's minimum is above its maximum", "reversed"));
            }
            self.supervisors[index].decl.backoff_ms = (min, max);
        }
        let mut children = Vec::with_capacity(decl.children.len());
        for (position, (name, ty)) in decl.children.iter().enumerate() {
            if children.iter().any(|(n, _): &(String, SupervisedChild)| *n == name.name) {
                diags.push(error(H206, name.span, format!("child `{}` is declared twice", name.name), "again"));
                continue;
            }
            let actor = self.class_named(&ty.name).and_then(|c| self.class_at(c)?.actor);
            let child = match (actor, self.supervisor_by_name.get(&ty.name)) {
                (Some(actor), _) => SupervisedChild::Actor(actor),
                (None, Some(&nested)) => {
                    if let Some((other, _)) = self.supervisors[nested].parent {
                        let other = self.supervisors[other].decl.name.clone();
                        diags.push(
                            error(
                                H419,
                                ty.span,
                                format!("supervisor `{}` already has a parent", ty.name),
                                "second parent",
                            )
                            .note(format!("`{other}` supervises it; a supervisor has one parent")),
                        );
                        continue;
                    }
                    self.supervisors[nested].parent = Some((index, position as u32));
                    SupervisedChild::Supervisor(nested)
                }
                (None, None) => {
                    diags.push(
                        error(H419, ty.span, format!("`{}` is neither an actor nor a supervisor", ty.name), "unknown")
                            .note("a supervisor's children are actors and other supervisors, named by their type"),
                    );
                    continue;
                }
            };
            children.push((name.name.clone(), child));
        }
        self.supervisors[index].decl.children = children;
    }

    /// Whether following the parents from supervisor `index` comes back to it.
    fn is_own_ancestor(&self, index: usize) -> bool {
        let mut at = self.supervisors[index].parent;
        for _ in 0..self.supervisors.len() {
            match at {
                Some((parent, _)) if parent == index => return true,
                Some((parent, _)) => at = self.supervisors[parent].parent,
                None => return false,
            }
        }
        true
    }

    /// The tree supervisor `index` belongs to and its path below the tree's root.
    pub fn supervisor_place(&self, index: usize) -> (usize, Vec<u32>) {
        let mut path = Vec::new();
        let mut at = index;
        while let Some((parent, position)) = self.supervisors[at].parent {
            path.push(position);
            at = parent;
        }
        path.reverse();
        (at, path)
    }

    /// The supervisors as TIR.
    pub fn tir_supervisors(&self) -> Vec<tir::Supervisor> {
        self.supervisors.iter().map(|s| s.decl.clone()).collect()
    }
}

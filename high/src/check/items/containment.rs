//! Classes and enums that would hold themselves (H311): a value of one would be infinitely
//! large. The declared ones are checked when the items are collected, generic instances once
//! every body has made the ones it uses.

use nagi_low::Diagnostic;

use super::{H311, Items, error};
use crate::tir::Ty;
use std::collections::HashSet;

impl Items<'_> {
    /// A class or enum that holds itself (directly or through options, classes or enums, but
    /// not through an array) would be infinitely large: the declared ones are checked here.
    pub(super) fn check_self_containment(&self, diags: &mut Vec<Diagnostic>) {
        let declared = (0..self.classes.len()).map(Ty::Class).chain((0..self.enums.len()).map(Ty::Enum));
        self.report_self_containment(declared.collect(), diags);
    }

    /// The same for the generic classes' and enums' instances the program made (once every
    /// body is checked); each template is reported once.
    pub(in crate::check) fn check_made_containment(&self, diags: &mut Vec<Diagnostic>) {
        let made_classes = self.instances.borrow().classes.len();
        let classes = (0..made_classes).map(|k| self.classes.len() + k).filter(|&c| self.class_generic(c).is_some());
        let made_enums = self.made_enums.borrow().len();
        let enums = (0..made_enums).map(|k| self.enums.len() + k).filter(|&e| self.enum_generic(e).is_some());
        self.report_self_containment(classes.map(Ty::Class).chain(enums.map(Ty::Enum)).collect(), diags);
    }

    /// Reports each of `nodes` (classes and enums) that holds itself, once per declaration.
    fn report_self_containment(&self, nodes: Vec<Ty>, diags: &mut Vec<Diagnostic>) {
        fn embedded(ty: &Ty) -> Option<Ty> {
            match ty {
                Ty::Class(_) | Ty::Enum(_) => Some(ty.clone()),
                Ty::Option(inner) => embedded(inner),
                _ => None,
            }
        }
        let held = |node: &Ty| -> Vec<Ty> {
            match node {
                Ty::Class(c) => self.class_at(*c).map_or_else(Vec::new, |info| {
                    info.fields.iter().filter_map(|f| embedded(f.ty.as_ref()?)).collect()
                }),
                Ty::Enum(e) => {
                    let Some(data) = self.enum_at(*e) else { return Vec::new() };
                    let payloads = data.variants.iter().filter_map(|v| v.payload.clone().flatten());
                    payloads.filter_map(|ty| embedded(&ty)).collect()
                }
                _ => Vec::new(),
            }
        };
        let mut reported: HashSet<(u32, u32)> = HashSet::new();
        // A `Result<T>` holding itself is reported at the class or enum that closes the cycle.
        for node in nodes {
            let mut seen: HashSet<Ty> = HashSet::new();
            let mut stack = held(&node);
            while let Some(c) = stack.pop() {
                if c == node {
                    let (what, span) = match node {
                        Ty::Class(c) => ("class", self.class_at(c).map(|i| i.name_span)),
                        Ty::Enum(e) => ("enum", self.enum_at(e).map(|i| i.name_span)),
                        _ => ("type", None),
                    };
                    let span = span.unwrap_or_default();
                    if !reported.insert((span.start, span.end)) {
                        break;
                    }
                    let name = self.ty_name(&node);
                    diags.push(
                        error(
                            H311,
                            span,
                            format!("{what} `{name}` contains itself, so its values would be infinitely large"),
                            format!("recursive {what}"),
                        )
                        .note(format!("hold the nested values in an array, `[{name}]`")),
                    );
                    break;
                }
                if seen.insert(c.clone()) {
                    stack.extend(held(&c));
                }
            }
        }
    }
}

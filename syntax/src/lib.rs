//! High Nagi's concrete syntax: the lalrpop grammar, the AST with source spans, and parse
//! diagnostics. Filled by the High Nagi issue; this crate holds no code yet.

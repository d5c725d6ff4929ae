//! Name resolution, type checking and diagnostics for High Nagi, and lowering of typed High into
//! Low. Filled by the High Nagi issue; this crate holds no code yet.

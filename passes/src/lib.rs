//! Low → Low optimization passes and the pass manager that runs a pipeline of them. Filled by
//! the passes issue; this crate holds no code yet.

//! Generates the High Nagi parser from `src/grammar.lalrpop`.
fn main() {
    lalrpop::process_src().expect("the grammar compiles");
}

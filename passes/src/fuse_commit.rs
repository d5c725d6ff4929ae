//! `fuse-commit`: a route handler's last statement commits the request's transaction with it.
//! Rewrites `await rtcall db.exec(…)` into `await rtcall db.exec_commit(…)` where nothing after
//! the statement can fail (`nagi_low::commit`, the rule the verifier checks as V248).
//!
//! Without it, a request that writes costs two jobs of the database thread: its statements
//! (the first one beginning the transaction), then, once the handler has answered 2xx, the
//! commit, sent by the per-request wrapper and awaited before the answer goes out. With it, the
//! commit runs in the statement's own job, and the wrapper has nothing left to end: one round
//! trip between the request's worker and the database thread instead of two. The answer and
//! the rows written are the same, because after the statement nothing can turn the answer into
//! a non-2xx one (docs/passes.md has the rule and an example).

use nagi_low::commit::{committing_handlers, final_statements};
use nagi_low::{Module, OpKind, RuntimeFn};

use crate::Pass;
use crate::body::ArenaGetMut;

/// The `fuse-commit` pass.
pub struct FuseCommit;

impl Pass for FuseCommit {
    fn name(&self) -> &'static str {
        "fuse-commit"
    }

    fn description(&self) -> &'static str {
        "commits a route's request transaction with the handler's last statement (db.exec_commit)"
    }

    fn run(&self, module: &mut Module) {
        for handler in committing_handlers(module) {
            let Some(func) = module.functions.get_mut_checked(handler) else { continue };
            for op in final_statements(func) {
                if let Some(data) = func.ops.get_mut_checked(op)
                    && let OpKind::RuntimeCall { func: row @ RuntimeFn::DbExec, .. } = &mut data.kind
                {
                    *row = RuntimeFn::DbExecCommit;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    const CLASS: &str = "class User {\n  id: i64\n  name: String\n}\ntable users: User key id\n";

    const INSERT: &str = "  %t1 = string \"INSERT INTO users (id, name) VALUES (?, ?)\"\n  %t2 = borrow %t1\n  %t3 = field.get %body, id\n  %t4 = field.ref %body, name\n  %t0 = await rtcall db.exec(%t2, %t3, %t4)\n  drop %t1\n";
    const LOCALS: &str = "  let %t0: i64\n  let %t1: String\n  let %t2: &str\n  let %t3: i64\n  let %t4: &str\n";

    // What the pass rewrites is tested by the filetests in golden/passes/fuse-commit/.
    #[test]
    fn the_verifier_refuses_a_commit_that_is_not_last() {
        let text = format!(
            "nagi-low 1\nmodule m\n\n{CLASS}route POST \"/users\" $post\n\nasync fn $post(%body: User) -> User {{\n{LOCALS}{}  rtcall print.i64(%t0)\n  return %body\n}}\n",
            INSERT.replace("db.exec(", "db.exec_commit(")
        );
        let (module, _) = nagi_low::parse(&text).expect("parses");
        let errors = nagi_low::verify(&module, None).expect_err("V248");
        assert_eq!(errors[0].code, "V248", "{errors:?}");
        assert!(errors[0].message.contains("something after it can fail"), "{}", errors[0].message);
    }
}

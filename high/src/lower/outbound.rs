//! Lowering of outbound calls: `http.get<T>(url, …)` becomes `await rtcall http.fetch_json<T>`
//! (or `http.fetch` for the answer's text) of the method, the URL, the body (a class encoded
//! with `json.encode<C>`, a `String` as it is, or `""` for none), the header lines (`[]` for
//! none) and the timeout in microseconds (`-1` for the default), all lent; then the test that
//! passes a failure on, as for a call of a failing function.

use nagi_low::{Constant, LocalId, OpKind, Operand, RuntimeFn, Type};

use super::FnCx;
use crate::tir::{Fetch, Ty};

impl FnCx<'_> {
    /// The call's option of its answer (`none` when it failed, the failure recorded).
    pub(super) fn fetch_result(&mut self, fetch: &Fetch) -> LocalId {
        let mut parts = vec![&*fetch.url];
        parts.extend(fetch.body.as_deref());
        parts.extend(fetch.headers.as_deref());
        parts.extend(fetch.timeout.as_deref());
        self.pin_clobbered(&parts);
        let method = self.str_temp(fetch.method.clone());
        let url = self.borrow_arg(&fetch.url);
        let body = match fetch.body.as_deref() {
            Some(body) => match &body.ty {
                Ty::Class(class) => {
                    let value = self.borrow_arg(body);
                    let text = self.temp(Type::String);
                    let class = Some(self.shared.types.classes[*class]);
                    self.runtime_call(RuntimeFn::JsonEncode, Some(text), vec![Operand::Local(value)], class);
                    let text_ref = self.temp(Type::reference(false, Type::String));
                    self.emit(OpKind::Borrow { dest: text_ref, src: text, mutable: false });
                    text_ref
                }
                _ => self.borrow_arg(body),
            },
            None => self.str_temp(String::new()),
        };
        let headers = match fetch.headers.as_deref() {
            Some(headers) => self.borrow_arg(headers),
            None => {
                let lines = Type::Array(Box::new(Type::String));
                let empty = self.temp(lines.clone());
                self.emit(OpKind::ArrayNew { dest: empty });
                let lent = self.temp(Type::reference(false, lines));
                self.emit(OpKind::Borrow { dest: lent, src: empty, mutable: false });
                lent
            }
        };
        let timeout = match fetch.timeout.as_deref() {
            Some(micros) => self.operand(micros),
            None => Operand::Const(Constant::I64(-1)),
        };
        let (row, answer, class) = match fetch.class {
            Some(class) => {
                let class = self.shared.types.classes[class];
                (RuntimeFn::HttpFetchJson, Type::Class(class), Some(class))
            }
            None => (RuntimeFn::HttpFetch, Type::String, None),
        };
        let result = self.temp(Type::Option(Box::new(answer)));
        let args = [method, url, body, headers].map(Operand::Local).into_iter().chain([timeout]).collect();
        self.runtime_call(row, Some(result), args, class);
        result
    }

    /// The call into `dest` (none when its answer is not wanted): a failure is passed on.
    pub(super) fn fetch(&mut self, fetch: &Fetch, dest: Option<LocalId>) {
        let result = self.fetch_result(fetch);
        self.pass_failure_on(result, dest);
    }
}

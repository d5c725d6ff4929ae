//! Runtime calls (`rtcall`), each answered by the [`Host`](crate::Host): printing, formatting and JSON. The
//! database rows are refused before a run starts ([`crate::check`]), so reaching one is a fault.
//!
//! Runtime functions never consume their arguments: scalars are operands, strings and classes
//! arrive as references, which are followed to the value they point to.

use nagi_low::{ClassId, LocalId, Operand, RowGroup, RuntimeFn};

use crate::Stop;
use crate::machine::Machine;
use crate::stack::{as_bool, as_str, fault};
use crate::value::Value;

impl Machine<'_, '_> {
    /// `[dest =] rtcall func[<class>](args)`.
    pub(crate) fn runtime_call(
        &mut self,
        dest: Option<LocalId>,
        func: RuntimeFn,
        class: Option<ClassId>,
        args: &[Operand],
    ) -> Result<(), Stop> {
        let result = match func.group() {
            RowGroup::Strings => {
                let values = self.row_args(func, args)?;
                self.host.string_call(func, &values).map_err(Stop::Trap)?
            }
            // The password rows run here, on the interpreter's thread: nothing else runs while
            // it waits, as for `time.sleep`.
            RowGroup::Secrets | RowGroup::Clock | RowGroup::Config | RowGroup::Ids => {
                let values = self.row_args(func, args)?;
                self.host.library_call(func, &values).map_err(Stop::Trap)?
            }
            RowGroup::Arrays => self.array_row(func, args)?,
            // The call blocks the interpreter's thread, which runs nothing else meanwhile.
            RowGroup::Outbound => {
                let values = self.row_args(func, args)?;
                self.host.fetch(self.module, class, &values).map_err(Stop::Trap)?
            }
            RowGroup::Database => {
                return Err(fault(format!("the interpreter does not support `rtcall {}`", func.name())));
            }
            RowGroup::Print | RowGroup::Format | RowGroup::Json => self.scalar_row(func, class, args)?,
            RowGroup::Http => self.http_row(func, args)?,
            // Nothing else runs while the interpreter waits: it runs no tasks.
            RowGroup::Time => {
                let ms = args.first().ok_or_else(|| fault("`rtcall time.sleep` lacks its argument"))?;
                let ms = u64::try_from(self.i64_arg(ms)?).unwrap_or(0);
                self.host.sleep(ms);
                Value::Unit
            }
            RowGroup::Test if func == RuntimeFn::TestSelected => Value::I64(self.host.selected_test()),
            RowGroup::Test if func == RuntimeFn::TestFailed => return Err(Stop::Trap(self.host.test_failure())),
            RowGroup::Test => {
                let message = args.first().ok_or_else(|| fault("`rtcall test.assert_failed` lacks its message"))?;
                return Err(Stop::Trap(as_str(self.stack.read(local_arg(message)?)?)?.to_owned()));
            }
        };
        match dest {
            Some(dest) => self.stack.set(dest, result),
            None => Ok(()),
        }
    }

    /// The arguments of a row of the string library, the secrets rows or the clock rows: `i64`,
    /// `Time` and `Duration` operands by value (each an `i64`), references followed and their
    /// values cloned.
    fn row_args(&mut self, func: RuntimeFn, args: &[Operand]) -> Result<Vec<Value>, Stop> {
        let mut values = Vec::with_capacity(args.len());
        for (arg, param) in args.iter().zip(func.data().params) {
            values.push(match param {
                nagi_low::RtType::I64 | nagi_low::RtType::Time | nagi_low::RtType::Duration => {
                    Value::I64(self.i64_arg(arg)?)
                }
                _ => self.stack.read(local_arg(arg)?)?.clone(),
            });
        }
        Ok(values)
    }

    /// A row of the array library: the order and the comparisons are the host's, the moving of
    /// elements the interpreter's own.
    fn array_row(&mut self, func: RuntimeFn, args: &[Operand]) -> Result<Value, Stop> {
        let arg = |i: usize| args.get(i).ok_or_else(|| fault(format!("`rtcall {}` lacks an argument", func.name())));
        let array = local_arg(arg(0)?)?;
        let items = |value: &Value| match value {
            Value::Array(items) => Ok(items.len()),
            other => Err(fault(format!("`rtcall {}` takes an array, not {}", func.name(), other.kind()))),
        };
        let len = items(self.stack.read(array)?)?;
        match func {
            RuntimeFn::ArraySort | RuntimeFn::ArraySortBy => {
                let field = match func {
                    RuntimeFn::ArraySortBy => {
                        Some(usize::try_from(self.i64_arg(arg(1)?)?).map_err(|_| fault("a negative field"))?)
                    }
                    _ => None,
                };
                let Value::Array(xs) = self.stack.read(array)? else { return Err(fault("not an array")) };
                let keys = xs
                    .iter()
                    .map(|x| match (field, x) {
                        (None, x) => Ok(x.clone()),
                        (Some(f), Value::Object(fields)) => {
                            fields.get(f).cloned().ok_or_else(|| fault("no such field"))
                        }
                        _ => Err(fault("`rtcall array.sort_by` on an element that is not an object")),
                    })
                    .collect::<Result<Vec<Value>, Stop>>()?;
                let order = self.host.sorted_order(&keys).map_err(Stop::Trap)?;
                self.put_in_order(array, &order)
            }
            RuntimeFn::ArraySortByKeys => {
                let Value::Array(keys) = self.stack.read(local_arg(arg(1)?)?)? else {
                    return Err(fault("`rtcall array.sort_by_keys` takes its keys as an array"));
                };
                if keys.len() != len {
                    return Err(Stop::Trap(format!("sort_by_keys: {} keys for {len} elements", keys.len())));
                }
                let order = self.host.sorted_order(&keys.clone()).map_err(Stop::Trap)?;
                self.put_in_order(array, &order)
            }
            RuntimeFn::ArrayReverse => {
                if let Value::Array(xs) = self.stack.read_mut(array)? {
                    xs.reverse();
                }
                Ok(Value::Unit)
            }
            RuntimeFn::ArrayContains => {
                let wanted = match arg(1)? {
                    Operand::Local(l) => self.stack.read(*l)?.clone(),
                    Operand::Const(c) => Value::constant(c),
                };
                let Value::Array(xs) = self.stack.read(array)? else { return Err(fault("not an array")) };
                Ok(Value::Bool(self.host.array_contains(xs, &wanted).map_err(Stop::Trap)?))
            }
            RuntimeFn::ArraySlice => {
                let (start, end) = (self.i64_arg(arg(1)?)?, self.i64_arg(arg(2)?)?);
                let range = self.host.slice_range(len, start, end).map_err(Stop::Trap)?;
                let Value::Array(xs) = self.stack.read(array)? else { return Err(fault("not an array")) };
                Ok(Value::Array(xs[range].to_vec()))
            }
            other => Err(fault(format!("`rtcall {}` is not a row of the array library", other.name()))),
        }
    }

    /// Puts the elements of the array local `array` in `order` (position `i` gets the element
    /// that stood at `order[i]`): the end of every sorting row.
    fn put_in_order(&mut self, array: LocalId, order: &[usize]) -> Result<Value, Stop> {
        let Value::Array(xs) = self.stack.read_mut(array)? else { return Err(fault("not an array")) };
        let mut old: Vec<Option<Value>> = std::mem::take(xs).into_iter().map(Some).collect();
        *xs = order.iter().map(|&i| old.get_mut(i).and_then(Option::take).unwrap_or(Value::Unset)).collect();
        Ok(Value::Unit)
    }

    /// `http.fail`, `http.clear_failure`, `http.failure_status`, `http.take_failure` and
    /// `http.set_header`, answered by the host.
    fn http_row(&mut self, func: RuntimeFn, args: &[Operand]) -> Result<Value, Stop> {
        let arg = |i: usize| args.get(i).ok_or_else(|| fault(format!("`rtcall {}` lacks an argument", func.name())));
        let text =
            |m: &Self, i: usize| -> Result<String, Stop> { Ok(as_str(m.stack.read(local_arg(arg(i)?)?)?)?.to_owned()) };
        if func == RuntimeFn::HttpClearFailure {
            self.host.clear_failure();
        } else if func == RuntimeFn::HttpFailureStatus {
            return Ok(Value::I64(self.host.recorded_failure(false).0));
        } else if func == RuntimeFn::HttpTakeFailure {
            return Ok(Value::Str(self.host.recorded_failure(true).1));
        } else if func == RuntimeFn::HttpFail {
            let status = self.i64_arg(arg(0)?)?;
            let message = text(self, 1)?;
            self.host.fail(status, &message);
        } else {
            let (name, value) = (text(self, 0)?, text(self, 1)?);
            self.host.set_header(&name, &value).map_err(Stop::Trap)?;
        }
        Ok(Value::Unit)
    }

    /// A printing, formatting or JSON row.
    fn scalar_row(&mut self, func: RuntimeFn, class: Option<ClassId>, args: &[Operand]) -> Result<Value, Stop> {
        let arg = |i: usize| args.get(i).ok_or_else(|| fault(format!("`rtcall {}` lacks an argument", func.name())));
        Ok(match func {
            RuntimeFn::PrintI32 => {
                let v = self.i32_arg(arg(0)?)?;
                self.host.print_i32(v);
                Value::Unit
            }
            RuntimeFn::PrintI64 => {
                let v = self.i64_arg(arg(0)?)?;
                self.host.print_i64(v);
                Value::Unit
            }
            RuntimeFn::PrintF64 => {
                let v = self.f64_arg(arg(0)?)?;
                self.host.print_f64(v);
                Value::Unit
            }
            RuntimeFn::PrintBool => {
                let v = as_bool(&self.stack.operand(arg(0)?)?)?;
                self.host.print_bool(v);
                Value::Unit
            }
            RuntimeFn::PrintStr => {
                let text = as_str(self.stack.read(local_arg(arg(0)?)?)?)?;
                self.host.print_str(text);
                Value::Unit
            }
            RuntimeFn::FmtI32 => {
                let v = self.i32_arg(arg(0)?)?;
                Value::Str(self.host.fmt_i32(v))
            }
            RuntimeFn::FmtI64 => {
                let v = self.i64_arg(arg(0)?)?;
                Value::Str(self.host.fmt_i64(v))
            }
            RuntimeFn::FmtF64 => {
                let v = self.f64_arg(arg(0)?)?;
                Value::Str(self.host.fmt_f64(v))
            }
            RuntimeFn::FmtBool => {
                let v = as_bool(&self.stack.operand(arg(0)?)?)?;
                Value::Str(self.host.fmt_bool(v))
            }
            RuntimeFn::JsonEncode => {
                let class = class.ok_or_else(|| fault("`rtcall json.encode` without a class"))?;
                let value = self.stack.read(local_arg(arg(0)?)?)?;
                Value::Str(self.host.json_encode(self.module, class, value).map_err(Stop::Trap)?)
            }
            RuntimeFn::JsonDecode => {
                let class = class.ok_or_else(|| fault("`rtcall json.decode` without a class"))?;
                let text = as_str(self.stack.read(local_arg(arg(0)?)?)?)?;
                Value::Option(self.host.json_decode(self.module, class, text).map(Box::new))
            }
            // The string library and the database are dispatched by their group.
            _ => return Err(fault(format!("`rtcall {}` is not a print, format or JSON row", func.name()))),
        })
    }

    fn i32_arg(&self, operand: &Operand) -> Result<i32, Stop> {
        match self.stack.operand(operand)? {
            Value::I32(v) => Ok(v),
            other => Err(fault(format!("expected an i32, found {}", other.kind()))),
        }
    }

    fn i64_arg(&self, operand: &Operand) -> Result<i64, Stop> {
        match self.stack.operand(operand)? {
            Value::I64(v) => Ok(v),
            other => Err(fault(format!("expected an i64, found {}", other.kind()))),
        }
    }

    fn f64_arg(&self, operand: &Operand) -> Result<f64, Stop> {
        match self.stack.operand(operand)? {
            Value::F64(v) => Ok(v),
            other => Err(fault(format!("expected an f64, found {}", other.kind()))),
        }
    }
}

/// The local a reference argument is passed in (strings and classes are never constants).
fn local_arg(operand: &Operand) -> Result<LocalId, Stop> {
    operand.as_local().ok_or_else(|| fault("a constant where a runtime function takes a reference"))
}

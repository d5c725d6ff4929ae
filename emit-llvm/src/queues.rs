//! Job queues (Low §8.5) on the LLVM path: `queue.push` encodes the job through its layout
//! descriptor and starts a pending runtime operation (`nagi_rt_queue_push`) that the frame
//! awaits like a statement, whose result is the job's id; and the service's table of queues,
//! each `{ name, handler, workers, max_attempts, backoff }` with the handler described as the
//! route a job's attempt takes (`QueueDecl::as_route`), so that the runtime binds the job and
//! the attempt's number exactly as it binds a route's body and query (docs/c-abi.md, "Job
//! queues").

use inkwell::values::BasicValueEnum;
use nagi_low::entities::index;
use nagi_low::{ArenaGet, LocalId, OpId, Operand, QueueId};

use crate::constants::{constant, int, struct_of, text};
use crate::function::FnEmitter;
use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error, descriptors};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// `[%d =] await queue.push NAME, %job, delay`.
    pub(crate) fn queue_push(
        &mut self,
        op: OpId,
        dest: Option<LocalId>,
        queue: QueueId,
        job: LocalId,
        delay: &Operand,
    ) -> Result<(), Error> {
        let cx = self.cx;
        let name = &cx.low.queues.get(queue).ok_or_else(|| Error::internal("a push to an unknown queue"))?.name;
        let (job, ty) = self.place(job)?;
        let desc = descriptors::descriptor(cx, ty);
        let delay = self.operand(delay)?;
        let job = cx.builder.build_pointer_cast(job, cx.layouts.byte_ptr(), "job")?;
        let (name, name_len) = text(cx, name);
        let args = [name.into(), name_len.into(), job.into(), desc.into(), delay.into()];
        let started = runtime_calls::call(cx, Rt::QueuePush, &args)?
            .ok_or_else(|| Error::internal("nagi_rt_queue_push returns nothing"))?
            .into_pointer_value();
        self.await_runtime(op, started, dest.map(|d| self.slot(d)))
    }
}

/// The constant `QueueDesc` of every queue, each pointing at its handler's `RouteDesc`
/// (written by `route_desc` under the route number `first_index + i`).
pub(crate) fn queue_descs<'ctx>(
    cx: &Cx<'ctx, '_>,
    first_index: usize,
    route_desc: impl Fn(usize, &nagi_low::RouteDecl) -> Result<BasicValueEnum<'ctx>, Error>,
) -> Result<Vec<BasicValueEnum<'ctx>>, Error> {
    let mut descs = Vec::with_capacity(cx.low.queues.len());
    for (id, queue) in cx.low.queues.iter() {
        // The queue's position numbers its handler's route and names its constants.
        let i = index(id);
        let route = route_desc(first_index + i, &queue.as_route())?;
        let route = constant(cx, &format!("nagi.queue{i}.handler"), route);
        let (min, max) = queue.backoff_ms;
        let (name, name_len) = text(cx, &queue.name);
        // A scheduled job's period, or its cron expression (a null pointer for none).
        let (every_ms, cron, cron_len) = match &queue.schedule {
            Some(nagi_low::Schedule::Every { ms }) => (*ms, cx.layouts.byte_ptr().const_null(), 0),
            Some(nagi_low::Schedule::Cron(expression)) => {
                let (bytes, _) = text(cx, expression);
                (0, bytes, expression.len() as u64)
            }
            None => (0, cx.layouts.byte_ptr().const_null(), 0),
        };
        descs.push(struct_of(
            cx,
            &[
                name.into(),
                name_len.into(),
                route.as_pointer_value().const_cast(cx.layouts.byte_ptr()).into(),
                int(cx, u64::from(queue.workers)),
                int(cx, u64::from(queue.max_attempts)),
                int(cx, min),
                int(cx, max),
                int(cx, every_ms),
                cron.into(),
                int(cx, cron_len),
            ],
        ));
    }
    Ok(descs)
}

/// The LLVM type of a `QueueDesc`.
pub(crate) fn queue_type<'ctx>(cx: &Cx<'ctx, '_>) -> inkwell::types::StructType<'ctx> {
    let (p, i) = (cx.layouts.byte_ptr().into(), cx.context.i64_type().into());
    cx.context.struct_type(&[p, i, p, i, i, i, i, i, p, i], false)
}

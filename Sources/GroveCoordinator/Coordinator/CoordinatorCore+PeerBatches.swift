import GroveCluster
import GroveWire

extension CoordinatorCore {
    /// Why a batch from worker number `worker` whose header counts `count` envelopes is refused
    /// as a whole, before any envelope is read; `nil` within `limits.batchEnvelopes`. The bound a
    /// client's batch has (``BatchBound``), held to workers too: every envelope of a batch is
    /// decided in the one turn that reads it, and a key of a worker group is no licence to hold
    /// the coordinator's loop. The worker was told the bound in its welcome (`batchEnvelopes`)
    /// and cuts its batches at it, so only a peer that does not is refused.
    func workerBatchRefusal(count: UInt64, from worker: Int) -> WireError? {
        BatchBound.refusal(count: count, limit: topology.limits.batchEnvelopes, answerer: "the coordinator (from worker \(workerNames[worker]))")
    }
}

import Grove
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerCore {
    /// What the worker does for what one of its machines sends on its own: an io call to another
    /// worker, its cancellation, an output. Decided by ``startCall(address:payload:binary:cancelled:)``,
    /// ``cancelCall(_:)`` and ``output(address:payload:)``; a call's result comes in as a message
    /// from the coordinator (``decide(_:payload:now:)``: ``Decision/complete(_:)``) and the
    /// coordinator's loss as a session action (``WorkerAction/failRemoteCalls(_:)``).
    ///
    /// The machine's task waits for its call's result in the runtime, under the call id the core
    /// gave it: the core decides when to answer it, the runtime only resumes it.
    enum MachineAction: Equatable {
        /// Send `io-request` `call` for the machine at `address` (its payload: the head, then the
        /// request's bytes, in the binary codec when `binary`).
        /// `traced`: the payload starts with a trace context (``TraceParent``).
        case sendRequest(call: UInt64, address: String, payload: [UInt8], binary: Bool, traced: Bool = false)
        /// Send `io-cancel` for `call`: its machine no longer waits, so the worker running it may
        /// stop.
        case sendCancel(call: UInt64, address: String)
        /// Answer the machine's task waiting for `call` with `result`.
        case resume(call: UInt64, IOCallResult)
        /// Send a machine's output (an ``OutputEvent``'s JSON) for the coordinator to publish
        /// and route.
        case sendOutput(address: String, payload: [UInt8])
    }

    /// What a call answered without a result says: its machine cancelled it.
    static let cancelledCall = IOCallResult.failure(.init(code: "cancelled", message: "the effect was cancelled"))

    /// The `io-cancel` payload.
    static let cancelReason = Array(#"{"reason":"cancelled"}"#.utf8)

    /// A machine's task starts an io call that runs on another worker, and waits for its result.
    /// - Parameters:
    ///   - address: The machine's address.
    ///   - payload: The `io-request` payload: the head, then the request's bytes.
    ///   - binary: Whether the request's bytes are in the binary codec.
    ///   - cancelled: Whether the task was cancelled before its call reached the core (cancel
    ///     by id, replace, terminal state, stop): then nothing goes out and it is answered
    ///     `cancelled` at once.
    /// - Returns: The call's id, under which the runtime keeps the waiting task until the core
    ///   says to resume it, and what to do now: send the request, or answer the task.
    mutating func startCall(address: String, payload: [UInt8], binary: Bool, cancelled: Bool, traced: Bool = false)
        -> (call: UInt64, action: MachineAction) {
        let call = nextCall
        nextCall += 1
        guard !cancelled else { return (call, .resume(call: call, Self.cancelledCall)) }
        // Without a welcome nothing brings a result: the call fails now, not at the next
        // reconnection.
        guard isWelcomed else { return (call, .resume(call: call, .failure(awayFailure))) }
        // A request the coordinator would refuse for its size would cost the connection, and
        // dropped it would leave the task waiting for good: it fails now, saying why.
        let envelope = OutboundLimit.envelopeBytes(address: address.utf8.count, payload: payload.count)
        guard envelope <= messageBytes else { return (call, .resume(call: call, .failure(tooLarge(envelope, address: address)))) }
        calls[call] = address
        return (call, .sendRequest(call: call, address: address, payload: payload, binary: binary, traced: traced))
    }

    /// The task waiting for `call` was cancelled: it is answered `cancelled` at once and the
    /// worker running the call is told, so its result, should it still come, is dropped.
    /// Nothing for a call already answered (its result, a failure, a cancellation before it
    /// was sent).
    mutating func cancelCall(_ call: UInt64) -> [MachineAction] {
        guard let address = calls.removeValue(forKey: call) else { return [] }
        return [.sendCancel(call: call, address: address), .resume(call: call, Self.cancelledCall)]
    }

    /// Forgets every call waiting for a result and says to fail them with `failure`: the
    /// coordinator that would bring their results is gone or has forgotten them.
    mutating func failingCalls(_ failure: IOCallResult.Failure) -> WorkerAction {
        calls.removeAll()
        return .failRemoteCalls(failure)
    }

    /// Why a call started while the coordinator is away fails at once.
    var awayFailure: IOCallResult.Failure {
        IOCallResult.Failure(code: IOFailure.Code.coordinatorLost.rawValue,
            message: "worker \(worker) is not registered with the coordinator at \(coordinator) right now; "
                + "the call cannot reach another worker. Retry once the worker is registered again")
    }

    /// Why a call whose `io-request` would pass `limits.messageBytes` fails at once.
    func tooLarge(_ envelope: Int, address: String) -> IOCallResult.Failure {
        IOCallResult.Failure(code: WireError.Code.oversized.rawValue,
            message: "the io request of \(address) is \(envelope) bytes encoded with its envelope, over limits.messageBytes "
                + "\(messageBytes), so worker \(worker) cannot send it; raise limits.messageBytes in the topology or make the request smaller")
    }

    /// A machine's output, as an ``OutputEvent``'s JSON: sent for the coordinator to publish it
    /// and apply the topology's routes. While the coordinator is away the closed outflow drops
    /// it, as everything a machine sends then (``WorkerAction/closeOutflow``).
    func output(address: String, payload: [UInt8]) -> MachineAction {
        .sendOutput(address: address, payload: payload)
    }
}

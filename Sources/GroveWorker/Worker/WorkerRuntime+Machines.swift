import Grove
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// An io call from one of this worker's machines to another worker, on the loop (the
    /// machine's task hops here through ``CoreInlet``): the core gives it an id and says what to
    /// send; the task waits under that id until the core says to resume it, with its result,
    /// its cancellation, or the coordinator's loss.
    func call(address: String, payload: [UInt8], binary: Bool, traced: Bool = false) async -> IOCallResult {
        // Nothing suspends from here until the task waits: no result, cancellation or tick
        // comes in between.
        let (call, action) = core.startCall(address: address, payload: payload, binary: binary, cancelled: Task.isCancelled,
                                            traced: traced)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                waiters[call] = waiter
                run(action)
            }
        } onCancel: {
            // On the thread that cancelled: onto the loop, in order with results and ticks.
            link.loop.spawn { await self.cancelCall(call) }
        }
    }

    private func cancelCall(_ call: UInt64) {
        for action in core.cancelCall(call) { run(action) }
    }

    /// A machine's output, as an ``OutputEvent``'s JSON.
    func output(address: String, payload: [UInt8]) {
        run(core.output(address: address, payload: payload))
    }

    /// Carries out what the core decided for what a machine sent.
    func run(_ action: WorkerCore.MachineAction) {
        switch action {
        case .sendRequest(let call, let address, let payload, let binary, let traced):
            var flags: Header.Flags = binary ? .binary : []
            if traced { flags.insert(.traced) }
            link.send(.ioRequest, flags: flags, correlation: call, address: address, payload: payload)
        case .sendCancel(let call, let address):
            link.send(.ioCancel, correlation: call, address: address, payload: WorkerCore.cancelReason)
        case .resume(let call, let result):
            waiters.removeValue(forKey: call)?.resume(returning: result)
        case .sendOutput(let address, let payload):
            link.send(.output, address: address, payload: payload)
        }
    }

    /// Answers every waiting task with `failure`, as ``WorkerAction/failRemoteCalls(_:)`` says
    /// (the core has forgotten their calls).
    /// - Returns: How many were waiting.
    func failWaiters(_ failure: IOCallResult.Failure) -> Int {
        let failed = waiters
        waiters = [:]
        for waiter in failed.values { waiter.resume(returning: .failure(failure)) }
        return failed.count
    }
}

import Grove
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Applies the `onEnd` policy of every instance that ended since the last call, as the core
    /// decides (``WorkerCore/machineEnded(_:now:)``). Called after each batch and each host
    /// drained alone, before their replies leave, and on each tick.
    func settleEndings() {
        let ended = turn.ended.take()
        guard !ended.isEmpty else { return }
        let now = ContinuousClock.now
        for address in ended { run(core.machineEnded(address, now: now)) }
    }

    /// An admin's `restart` of `instance`, request `correlation`: the core says whether to
    /// start it again now (it ended) or to stop it first.
    func restart(_ instance: any HostedMachine, correlation: UInt64, address: String) {
        // Every end so far decided first: a policy's decision for an end noted earlier cannot
        // then apply to the instance this restart makes.
        settleEndings()
        run(core.restartRequested(address, correlation: correlation, running: !instance.hasEnded))
    }

    /// Replaces the instance at `address` by a new one from its machine's initial state, and
    /// answers the admins' requests `answering` with its state. The policy's restart
    /// (`answering` empty) replaces only an instance that is still ended.
    func restartInstance(_ address: String, answering: [UInt64]) {
        if answering.isEmpty {
            guard let current = instances[address], current.hasEnded else { return }
        }
        instances[address] = nil
        let fresh: any HostedMachine
        do {
            fresh = try instance(for: address)
        } catch {
            log.error("machine \(address) could not be restarted: \(error.message)")
            for correlation in answering { link.send(WireMessage.error(error, correlation: correlation, address: address)) }
            return
        }
        log.notice("machine \(address) restarted from its initial state", metadata: ["by": "\(answering.isEmpty ? "onEnd" : "admin")"])
        if !answering.isEmpty, MachineAddress.hasKey(address) {
            // The old instance's end told the coordinator, which forgets an ended instance its
            // machine removes: the admin's new one is listed again.
            for report in InstancesReport.reports(for: [address]) { link.publish(.instances, address: link.worker, payload: report) }
        }
        for correlation in answering {
            fresh.state(reply: Self.stateAnswer(link, correlation: correlation, address: address))
        }
    }

    /// Drops the ended keyed instance at `address` (`onEnd: "remove"`): its host goes with it,
    /// and so do its dead letters (``dropPoison(of:)``); its key's next event starts a new
    /// instance. Its durable record, if any, was removed when it ended.
    func removeInstance(_ address: String) {
        guard let current = instances[address], current.hasEnded else { return }
        instances[address] = nil
        dropPoison(of: address)
        log.debug("machine \(address) ended and was removed (onEnd \"remove\")")
    }

    /// Stops the instance at `address` after the events queued before, for an admin's
    /// `restart`; its end restarts it. The stop's own answer goes nowhere.
    func stopInstance(_ address: String) {
        instances[address]?.stop { _ in }
    }
}

@_spi(GroveInternal) import GroveWire

extension WorkerRuntime {
    /// Opens the flight recorder before the first registration and takes what the last process
    /// under this name left in it: the event it died running, if it did. That event is reported
    /// with the registration (``WorkerCore/crashReport``), so the coordinator attributes the
    /// crash (to the event's pattern and to its sender) before it welcomes this process; a
    /// durable machine's is also counted per address once the store opens
    /// (``watchForPoison(store:records:)``). Then every host made from now on notes its events.
    func openFlightRecorder() {
        guard let openRecorder, poison.recorder == nil else { return }
        let recorder: FlightRecorder
        do {
            recorder = try openRecorder()
        } catch {
            failed(.recorderOpen(error.message))
            return
        }
        if let unfinished = recorder.takeUnfinished() {
            unfinishedRun = unfinished
            let report = crashReport(of: unfinished)
            core.crashReport = report
            let what = report.pattern.map { " (\($0))" } ?? ""
            log.warning("the last process of worker \(link.worker) died while \(unfinished.address) ran a \(unfinished.origin.noun)\(what); reporting it to the coordinator")
        }
        let loop = link.loop
        recorder.onCleared { [weak self] address, identity in
            loop.spawn { [weak self] in await self?.forgive(identity, at: address) }
        }
        poison.recorder = recorder
        flightRecorder = recorder
        // Each type's instances share one recorder, made now instead of found per instance.
        for (type, factory) in factories { factories[type] = factory.recording(type, in: recorder) }
    }

    /// What the coordinator is told of `run`: its address, its machine's type, its event's case
    /// (as the type encodes it, whatever form its sender wrote it in) and the request that
    /// carried it.
    func crashReport(of run: RecordedRun) -> CrashReport {
        var report = CrashReport(address: run.address, type: run.type, origin: run.origin.name,
                                 correlation: run.correlation == 0 ? nil : run.correlation)
        if let type = run.type, !run.event.isEmpty {
            report.event = factory(for: type)?.eventCase(of: run.event, binary: run.binary)
        }
        return report
    }

    /// The patterns the coordinator quarantined for every address (its welcome, or a
    /// `quarantine` message): clients' events of them are refused from now on.
    func adoptPatterns(_ patterns: [PoisonPattern]) {
        guard poison.setPatterns(patterns) else { return }
        let list = patterns.isEmpty ? "none" : patterns.sorted().map(\.description).joined(separator: ", ")
        log.notice("event patterns quarantined for every address: \(list)")
    }
}

extension RecordedRun.Origin {
    /// The origin as a ``CrashReport`` names it.
    var name: String {
        switch self {
        case .sent: "sent"
        case .inline: "inline"
        case .effect: "effect"
        case .timer: "timer"
        case .journal: "journal"
        case .unknown: "unknown"
        }
    }
}

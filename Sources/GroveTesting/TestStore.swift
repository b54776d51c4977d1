public import Grove
public import GroveRuntime
public import Testing

/// An exhaustive test harness for a machine, in the spirit of TCA's `TestStore`.
///
/// Every state change must be asserted (`send`'s and `receive`'s closures describe it), every
/// event the machine's effects or inline events produce must be received, every output must be
/// received, and `finish()` fails the test when effects are still running. A state, event or
/// output that differs from the expected one is reported with a field-by-field diff, as TCA does.
///
/// ```swift
/// let store = TestStore(DataLoader.self, io: handlers)
/// await store.send(.load) { $0 = .loading }
/// await store.receive(.loaded(["a"])) { $0 = .loaded(["a"]) }
/// await store.finish()
/// ```
public final class TestStore<M: Machine> where M.State: Equatable, M.Event: Equatable {
    /// The host under test.
    public let host: MachineHost<M>
    /// The store's clock: advance it with ``advance(by:sourceLocation:)``.
    public let clock: TestClock
    /// The last asserted state.
    public private(set) var state: M.State
    /// How long `receive` and `finish` wait for effects before failing.
    public var timeout: Duration = .seconds(10)

    private let recorder: TraceRecorder<M>
    /// What the host processed, in order; `handled` is `false` for `.unhandled` transitions.
    private var receivedEvents: [(event: M.Event, origin: EventOrigin, state: M.State, handled: Bool)] = []
    private var receivedOutputs: [M.Output] = []
    /// Work that threw with no failure event from the machine, not yet asserted.
    private var failedWork: [(id: EffectID, error: any Error)] = []
    private var finished = false
    private let createdAt: SourceLocation
    private let reportIssue: IssueReporter
    /// What a diff of two states shows: the state itself, or for a reducer's store the user's
    /// state inside it (``ReducerTestStore`` sets it), so the diff reads in the user's terms.
    var dumpedState: (M.State) -> Any = { $0 }

    /// Where the store reports a failed expectation: a message and the line it belongs to.
    public typealias IssueReporter = @Sendable (_ message: String, _ sourceLocation: SourceLocation) -> Void

    /// Records each failure as a Swift Testing issue of the running test: the default reporter.
    public static var recordIssue: IssueReporter {
        { message, sourceLocation in Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation) }
    }

    /// - Parameters:
    ///   - machine: The machine under test.
    ///   - initialState: Overrides `M.initialState`.
    ///   - env: The environment for local effects; use test doubles.
    ///   - io: Handlers for `.io` effects.
    ///   - clock: The clock timers use; advance it with ``advance(by:sourceLocation:)``.
    ///   - reportIssue: Where failures go; the default records them as issues of the running
    ///     test. The store's own tests pass a collector to assert exactly what it reports.
    public init(
        _ machine: M.Type = M.self,
        initialState: M.State? = nil,
        env: M.Env,
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: @escaping IssueReporter = TestStore.recordIssue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let recorder = TraceRecorder<M>()
        self.recorder = recorder
        self.reportIssue = reportIssue
        self.clock = clock
        self.state = initialState ?? M.initialState
        self.createdAt = sourceLocation
        self.host = MachineHost(machine, env: env, initialState: initialState, io: io, clock: clock,
                                options: HostOptions(trace: { recorder.record($0) }))
        host.start()
    }

    /// A store for a machine without an environment.
    public convenience init(
        _ machine: M.Type = M.self,
        initialState: M.State? = nil,
        io: IOHandlers = IOHandlers(),
        clock: TestClock = TestClock(),
        reportIssue: @escaping IssueReporter = TestStore.recordIssue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where M.Env == Void {
        self.init(machine, initialState: initialState, env: (), io: io, clock: clock, reportIssue: reportIssue,
                  sourceLocation: sourceLocation)
    }

    deinit {
        if !finished {
            fail("TestStore was never finished: call `await store.finish()` at the end of the test "
                + "so it can check that no effect is left running", createdAt)
        }
    }

    /// Sends `event` and asserts the state it commits.
    /// - Parameters:
    ///   - event: The event to send.
    ///   - update: Turns the previous state into the expected one; omit when the state stays the same.
    public func send(
        _ event: M.Event,
        assert update: ((inout M.State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        guard let processed = await sendAndCollect(event, sourceLocation) else { return }
        guard processed.handled else {
            fail("\(event) is unhandled in state \(state); use sendUnhandled(_:) when that is expected",
                 sourceLocation)
            checkUntouched(processed.state, by: event, sourceLocation)
            return
        }
        check(processed.state, after: event, update, sourceLocation)
    }

    /// Sends `event` and asserts that the machine does not handle it in the current state, and
    /// that `update` left the state untouched, as `.unhandled` requires.
    public func sendUnhandled(_ event: M.Event, sourceLocation: SourceLocation = #_sourceLocation) async {
        guard let processed = await sendAndCollect(event, sourceLocation) else { return }
        expectUnhandled(processed, sourceLocation)
    }

    /// Waits for the next event the machine processed on its own (from an effect, a timer or an
    /// inline `.events`) and asserts it and the state it committed.
    public func receive(
        _ event: M.Event,
        assert update: ((inout M.State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        guard let next = await nextReceived(event, sourceLocation) else { return }
        guard next.handled else {
            fail("received \(event), but it is unhandled in state \(state); use receiveUnhandled(_:) "
                + "when that is expected", sourceLocation)
            checkUntouched(next.state, by: event, sourceLocation)
            return
        }
        check(next.state, after: event, update, sourceLocation)
    }

    /// Waits for the next event the machine processed on its own and asserts that it was
    /// unhandled, leaving the state untouched.
    public func receiveUnhandled(_ event: M.Event, sourceLocation: SourceLocation = #_sourceLocation) async {
        guard let next = await nextReceived(event, sourceLocation) else { return }
        expectUnhandled(next, sourceLocation)
    }

    private typealias Processed = (event: M.Event, origin: EventOrigin, state: M.State, handled: Bool)

    /// Sends `event` after checking nothing is left to receive; returns what the host did with it.
    private func sendAndCollect(_ event: M.Event, _ sourceLocation: SourceLocation) async -> Processed? {
        await collect()
        if let pending = receivedEvents.first {
            fail("must receive \(pending.event) before sending \(event): the machine processed it "
                + "and the test did not assert it", sourceLocation)
            // Skip what was missed so the rest of the test reports its own problems, not echoes.
            if let last = receivedEvents.last { state = last.state }
            receivedEvents.removeAll()
        }
        do {
            _ = try await host.sendAndWait(event)
        } catch {
            fail("sending \(event) failed: \(error)", sourceLocation)
            return nil
        }
        await collect()
        guard let index = receivedEvents.firstIndex(where: { $0.origin == .sent && $0.event == event }) else {
            fail("the host did not report processing \(event)", sourceLocation)
            return nil
        }
        if index > 0 {
            let missed = receivedEvents[..<index].map { "\($0.event)" }.joined(separator: ", ")
            fail("must receive \(missed) before sending \(event): the machine processed them first", sourceLocation)
            state = receivedEvents[index - 1].state
        }
        let processed = receivedEvents[index]
        receivedEvents.removeFirst(index + 1)
        return processed
    }

    /// The next event the machine processed on its own, which must be `event`.
    private func nextReceived(_ event: M.Event, _ sourceLocation: SourceLocation) async -> Processed? {
        guard await waitFor({ !$0.receivedEvents.isEmpty }) else {
            fail("expected to receive \(event), but nothing arrived within \(timeout)", sourceLocation)
            return nil
        }
        let next = receivedEvents.removeFirst()
        guard next.event == event else {
            fail(Difference.message("expected to receive \(event), but received \(next.event)", event, next.event,
                                    first: "expected", second: "received"), sourceLocation)
            state = next.state
            return nil
        }
        return next
    }

    private func expectUnhandled(_ processed: Processed, _ sourceLocation: SourceLocation) {
        if processed.handled {
            fail(Difference.message("expected \(processed.event) to be unhandled, but the machine handled it", dumpedState(state),
                                    dumpedState(processed.state), first: "before", second: "after"), sourceLocation)
            state = processed.state
        } else {
            checkUntouched(processed.state, by: processed.event, sourceLocation)
        }
    }

    /// `.unhandled` promises the state is as it was; a machine that changed it anyway is wrong.
    private func checkUntouched(_ actual: M.State, by event: M.Event, _ sourceLocation: SourceLocation) {
        guard actual != state else { return }
        fail(Difference.message(
            "update returned .unhandled for \(event) but changed the state; an unhandled transition must leave it untouched",
            dumpedState(state), dumpedState(actual), first: "before", second: "after"), sourceLocation)
        state = actual
    }

    /// Moves the store's clock forward, firing due timers and processing what they cause.
    public func advance(by duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
        let host = host
        await clock.advance(by: duration) { await host.flush() }
        await collect()
    }

    /// Checks the test left nothing behind: waits up to ``timeout`` for in-flight effects, then
    /// fails for effects still running, for events still postponed and for events or outputs
    /// not received. Stops the host.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        finished = true
        let deadline = ContinuousClock.now + timeout
        // Only running tasks can end by waiting; pending timers need the clock advanced.
        while await host.runningTaskCount > 0, ContinuousClock.now < deadline {
            await recorder.waitForActivity(timeout: deadline - ContinuousClock.now)
            await collect()
        }
        await collect()
        let running = await host.inFlightEffects
        if !running.isEmpty {
            let ids = running.map(\.description).sorted().joined(separator: ", ")
            fail("effects still running at the end of the test: \(ids). Cancel them from the machine, "
                + "advance the clock past their timers, or receive their results", sourceLocation)
        }
        let postponed = await host.postponedEvents
        if !postponed.isEmpty {
            let events = postponed.map { "\($0)" }.joined(separator: ", ")
            fail("events postponed and never delivered again: \(events). Send an event that changes the state "
                + "so they are delivered, and receive them", sourceLocation)
        }
        if !receivedEvents.isEmpty {
            let events = receivedEvents.map { "\($0.event)" }.joined(separator: ", ")
            fail("events processed but not received by the test: \(events)", sourceLocation)
        }
        if !receivedOutputs.isEmpty {
            fail("outputs emitted but not received by the test: \(receivedOutputs)",
                         sourceLocation)
        }
        if !failedWork.isEmpty {
            let failures = failedWork.map { "\($0.id) threw \($0.error)" }.joined(separator: ", ")
            fail("effects failed and the machine has no failure event for them: \(failures). Give the "
                + "machine a failureEvent(_:), the effect an onError:, or assert it with receiveFailure(_:)", sourceLocation)
        }
        await host.stop()
    }

    /// Waits for work to throw without a failure event from the machine (the host logged it and
    /// the machine runs on), and returns what it threw.
    /// - Parameter id: The work's id; `nil` for any (work without an id gets a generated one).
    @discardableResult
    public func receiveFailure(_ id: EffectID? = nil, sourceLocation: SourceLocation = #_sourceLocation) async -> (any Error)? {
        guard await waitFor({ !$0.failedWork.isEmpty }) else {
            fail("expected effect \(id.map { "\($0)" } ?? "work") to fail, but none failed within \(timeout)", sourceLocation)
            return nil
        }
        let failure = failedWork.removeFirst()
        if let id, failure.id != id {
            fail("expected effect \(id) to fail, but \(failure.id) failed first (\(failure.error))", sourceLocation)
        }
        return failure.error
    }

    private func fail(_ message: String, _ sourceLocation: SourceLocation) {
        reportIssue(message, sourceLocation)
    }

    /// Drains the host and moves what it recorded into the store's queues.
    private func collect() async {
        await host.flush()
        for trace in recorder.take() {
            switch trace {
            case .processed(let event, let origin, let state):
                receivedEvents.append((event, origin, state, true))
            case .unhandled(let event, let origin, let state):
                receivedEvents.append((event, origin, state, false))
            case .output(let output):
                receivedOutputs.append(output)
            case .workFailed(let id, let error):
                failedWork.append((id, error))
            case .workEnded, .resultDiscarded:
                break
            }
        }
    }

    /// Collects until `condition` holds or ``timeout`` passes.
    private func waitFor(_ condition: (TestStore) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        await collect()
        while !condition(self) {
            guard ContinuousClock.now < deadline else { return false }
            await recorder.waitForActivity(timeout: deadline - ContinuousClock.now)
            await collect()
        }
        return true
    }

    private func check(
        _ actual: M.State, after event: M.Event,
        _ update: ((inout M.State) throws -> Void)?, _ sourceLocation: SourceLocation
    ) {
        var expected = state
        do {
            try update?(&expected)
        } catch {
            fail("the assertion closure for \(event) threw \(error)", sourceLocation)
        }
        if expected != actual {
            fail(Difference.message("state after \(event) differs from the expected one", dumpedState(expected), dumpedState(actual),
                                    first: "expected", second: "actual"), sourceLocation)
        }
        state = actual
    }
}

extension TestStore where M.Output: Equatable {
    /// Waits for the next output and asserts it.
    public func receiveOutput(_ output: M.Output, sourceLocation: SourceLocation = #_sourceLocation) async {
        guard await waitFor({ !$0.receivedOutputs.isEmpty }) else {
            fail("expected output \(output), but none arrived within \(timeout)", sourceLocation)
            return
        }
        let next = receivedOutputs.removeFirst()
        if next != output {
            fail(Difference.message("expected output \(output), but the machine emitted \(next)", output, next,
                                    first: "expected", second: "emitted"), sourceLocation)
        }
    }
}

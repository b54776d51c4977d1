extension MachineEffect {
    /// No work.
    @inlinable public static var none: MachineEffect { MachineEffect(kind: .none) }

    /// The machine has no transition for this (state, event) pair; the host keeps the state and
    /// reports the pair to its diagnostics hook. `update` must not have changed the state.
    @inlinable public static var unhandled: MachineEffect { MachineEffect(kind: .unhandled) }

    /// Events processed right after this transition, in array order, before any queued event.
    @inlinable public static func events(_ events: [M.Event]) -> MachineEffect { MachineEffect(kind: .events(events)) }

    /// Events processed right after this transition, in order, before any queued event.
    @inlinable public static func events(_ events: M.Event...) -> MachineEffect { MachineEffect(kind: .events(events)) }

    /// Emits `output` to the host's observers (and, in a topology, to its routes).
    @inlinable public static func output(_ output: M.Output) -> MachineEffect { MachineEffect(kind: .output(output)) }

    /// Long-running async work that may send many events through `send`.
    ///
    /// ```swift
    /// return .operation(id: "ticker") { env, send in
    ///     for await reading in env.sensor.readings() { try send(.reading(reading)) }
    /// }
    /// ```
    /// - Parameters:
    ///   - id: Names the work for cancel and replace; a fresh generated id when `nil`.
    ///   - onError: What a thrown error (other than cancellation) does; by default the machine's
    ///     ``Machine/failureEvent(_:)``, or a logged failure with the machine running.
    ///   - body: The work. It receives the host's environment and a ``Send`` handle.
    public static func operation(
        id: EffectID? = nil,
        onError: ErrorPolicy = .failureEvent,
        _ body: @escaping @Sendable (M.Env, Send<M.Event>) async throws -> Void
    ) -> MachineEffect {
        MachineEffect(kind: .work(Work(id: id, kind: .operation, onError: onError, run: body)))
    }

    /// Oak-style operation: `Effect(id: "load") { env, input in try input.send(.loaded(...)) }`.
    public init(
        id: EffectID? = nil,
        onError: ErrorPolicy = .failureEvent,
        operation: @escaping @Sendable (M.Env, Send<M.Event>) async throws -> Void
    ) {
        self = .operation(id: id, onError: onError, operation)
    }

    /// A single async result turned into an event (or nothing, when `body` returns `nil`).
    ///
    /// ```swift
    /// return .task(id: "search", onError: .map { .failed("\($0)") }) { env in
    ///     .results(try await env.search(query))
    /// }
    /// ```
    public static func task(
        id: EffectID? = nil,
        onError: ErrorPolicy = .failureEvent,
        _ body: @escaping @Sendable (M.Env) async throws -> M.Event?
    ) -> MachineEffect {
        MachineEffect(kind: .work(Work(id: id, kind: .task, onError: onError) { env, send in
            if let event = try await body(env) { try send(event) }
        }))
    }

    /// Delivers each element of the sequence `make` returns, in order, until it finishes or the
    /// work is cancelled. Cancelling ends the iteration, so `AsyncStream` termination handlers run.
    public static func stream<S: AsyncSequence & Sendable>(
        id: EffectID? = nil,
        onError: ErrorPolicy = .failureEvent,
        _ make: @escaping @Sendable (M.Env) -> S
    ) -> MachineEffect where S.Element == M.Event {
        MachineEffect(kind: .work(Work(id: id, kind: .stream, onError: onError) { env, send in
            for try await event in make(env) { try send(event) }
        }))
    }

    /// Sends `event` after `delay` on the host's clock. Timers are durable: a snapshot records the
    /// absolute deadline and a restored machine fires it on time.
    ///
    /// With an `id` this is a named timeout (`gen_statem`'s generic timeout): arming it again
    /// under the same id replaces it, and only `.cancel(id)` ends it early. See also
    /// ``eventTimeout(after:send:)`` and, for a ``StateScoped`` machine, ``stateTimeout(after:send:)``.
    ///
    /// The ids Grove reserves (``EffectID/stateTimeout``, ``EffectID/eventTimeout``) are refused
    /// here (a precondition): a timer under them is armed only by the constructor that says
    /// what cancels it, so no machine that is not `StateScoped` arms a state timeout that
    /// nothing cancels.
    public static func after(_ delay: Duration, id: EffectID? = nil, send event: M.Event) -> MachineEffect {
        if let id, case .reserved(let reserved) = id.storage {
            preconditionFailure(Self.reservedTimerMessage(reserved))
        }
        if let id, case .levelTimeout = id.storage {
            preconditionFailure("`.after(_:id:send:)` with the id Grove reserves for \(id): write "
                + "`.stateTimeout(after:in:send:)` in a Statechart instead, or name a timer of your own with a string id")
        }
        return MachineEffect(kind: .timer(id: id, delay: delay, event: event))
    }

    static func reservedTimerMessage(_ reserved: EffectID.Reserved) -> String {
        let instead = switch reserved {
        case .stateTimeout: "`.stateTimeout(after:send:)` in a StateScoped machine"
        case .eventTimeout: "`.eventTimeout(after:send:)`"
        }
        return "`.after(_:id:send:)` with the id Grove reserves for \(EffectID(storage: .reserved(reserved))): "
            + "write \(instead) instead, or name a timer of your own with a string id such as \"retry\""
    }

    /// Sends `event` after `delay` unless the machine receives another event first
    /// (`gen_statem`'s `event_timeout`): any event cancels it, handled or not, from a sender, an
    /// effect, a timer or an inline `.events`. Arming it again replaces it. A timer under
    /// ``EffectID/eventTimeout``, so durable as every timer.
    ///
    /// ```swift
    /// case (.connected, .message(let text)):
    ///     return .merge([.output(text), .eventTimeout(after: .seconds(30), send: .idle)])
    /// ```
    public static func eventTimeout(after delay: Duration, send event: M.Event) -> MachineEffect {
        MachineEffect(kind: .timer(id: .eventTimeout, delay: delay, event: event))
    }

    /// A Codable request executed by the effect handler registered for `R`, locally or in another
    /// process; its result comes back as the event `result` makes.
    ///
    /// ```swift
    /// return .io(id: "fetch", FetchItems(page: 1)) { result in
    ///     switch result {
    ///     case .success(let items): .loaded(items)
    ///     case .failure(let failure): .failed(failure.message)
    ///     }
    /// }
    /// ```
    public static func io<R: IORequest>(
        id: EffectID? = nil,
        _ request: R,
        result: @escaping @Sendable (Result<R.Response, IOFailure>) -> M.Event
    ) -> MachineEffect {
        MachineEffect(kind: .io(id: id, IOCall(request, result: result)))
    }

    /// Cancels the work named `id`. A no-op when nothing with that id is in flight.
    public static func cancel(_ id: EffectID) -> MachineEffect { MachineEffect(kind: .cancel(id)) }

    /// Oak spelling of ``cancel(_:)``.
    public static func cancel(id: EffectID) -> MachineEffect { MachineEffect(kind: .cancel(id)) }

    /// Cancels every piece of work of this machine instance in flight when it starts, except
    /// the merges and sequences it is part of: what comes after it in them still starts, so
    /// `.merge([.cancelAll, .stateTimeout(after: .seconds(5), send: .gaveUp)])` drops
    /// everything and arms the new state's timeout.
    public static var cancelAll: MachineEffect { MachineEffect(kind: .cancelAll) }

    /// Runs `effects` one after another: a step starts when the previous one has finished (its
    /// work completed and its events were processed). Cancelling `id` cancels the running step
    /// and the steps not yet started.
    public static func sequence(_ effects: [MachineEffect], id: EffectID? = nil) -> MachineEffect {
        MachineEffect(kind: .sequence(id: id, effects))
    }

    /// Runs `effects` concurrently. Cancelling `id` cancels all of them.
    public static func merge(_ effects: [MachineEffect], id: EffectID? = nil) -> MachineEffect {
        MachineEffect(kind: .merge(id: id, effects))
    }
}

extension MachineEffect where M: StateScoped {
    /// Keeps the event until the machine's state changes (`gen_statem`'s `postpone`): the host
    /// holds it, and when the state's key (``StateScoped/stateKey(_:)``) next changes it delivers
    /// the postponed events again, in the order they came, after the inline events of that
    /// transition and ahead of everything waiting in the mailbox. Durable: a snapshot carries
    /// them (``Snapshot/postponed``).
    ///
    /// Return it as the whole effect of a transition that leaves the state as it is:
    /// ```swift
    /// case (.connecting, .send):
    ///     return .postpone          // sent again once connected (or once the state changes)
    /// ```
    /// Returned by a transition that changes the state's key, the event is delivered again at
    /// once in the new state, after those postponed before it (as `gen_statem` retries it).
    /// Inside a `.merge` or `.sequence`, or from ``StateScoped/enter(_:)`` or
    /// ``StateScoped/exit(_:)``, it keeps nothing: the host reports
    /// `HostDiagnostic.postponeIgnored` and runs the rest.
    public static var postpone: MachineEffect { MachineEffect(kind: .postpone) }

    /// Sends `event` after `delay` unless the machine leaves its state first (`gen_statem`'s
    /// `state_timeout`); the state is what ``StateScoped/stateKey(_:)`` says. Arming it again,
    /// in the same state or on entering another, replaces it. A timer under
    /// ``EffectID/stateTimeout``, so durable as every timer: a restored machine fires it at its
    /// original deadline, and leaving the state after the restore still cancels it.
    ///
    /// ```swift
    /// case (.idle, .connect):
    ///     state = .connecting
    ///     return .merge([.io(id: "dial", Dial()) { .dialed($0) },
    ///                    .stateTimeout(after: .seconds(5), send: .gaveUp)])
    /// ```
    public static func stateTimeout(after delay: Duration, send event: M.Event) -> MachineEffect {
        MachineEffect(kind: .timer(id: .stateTimeout, delay: delay, event: event))
    }
}

/// The effect of a SwiftTea-style reducer: work described as a value, run by the host after the
/// reducer returns.
///
/// The cases can be matched in tests, as SwiftTea's could:
/// ```swift
/// let (_, effect) = Search.reduce(Search.State(query: "oak", isSearching: true), .cancelSearch)
/// guard case .cancel(let id) = effect else { Issue.record("expected cancel"); return }
/// #expect(id == "search")
/// ```
/// Build effects with the static constructors `.task(_:catch:)`, `.cancellable(_:_:catch:)`,
/// `.stream(_:id:catch:)`, `.io(id:_:result:)`, `.after(_:send:)` and the cases `.cancel(_:)`,
/// `.sequence(_:)`, `.merge(_:)`. Closures
/// receive the program's `Environment`
/// (`.task { env in .loaded(try await env.api.fetch()) }`); when the environment is `Void`,
/// closures without an argument work too (`.task { .loaded(try await fetch()) }`).
///
/// An error a closure throws is logged and the machine keeps running (errors are events, not
/// stops: docs/DIALECTS.md), unless the effect was built with `catch:`, which turns the error
/// into an action.
public enum TeaEffect<Action: Sendable, Environment: Sendable>: Sendable {
    /// No work.
    case none
    /// The reducer does not handle this action in this state: the returned state is discarded and
    /// the host reports the pair to its diagnostics hook. Meaningful only as the whole effect.
    case unhandled
    /// Async work with a single result, not cancellable by name.
    case task(Work)
    /// Async work with a single result under an id: starting work with an id in flight cancels
    /// the old work first, whose result is then never delivered.
    case cancellable(Work, EffectID)
    /// Cancels the work named by the id; a no-op when none is in flight.
    case cancel(EffectID)
    /// Runs the effects one after another. Unlike SwiftTea, whose `.sequence` started every step
    /// at once, a step starts only when the previous one finished (its work completed and its
    /// action was processed). Use ``merge(_:)`` for concurrency.
    case sequence([TeaEffect])
    /// Runs the effects concurrently.
    case merge([TeaEffect])
    /// Delivers every element of an async sequence, under an id so it can be cancelled. Cancelling
    /// ends the iteration, so an `AsyncStream`'s `onTermination` runs.
    case stream(Work, id: EffectID)
    /// Sends the action after the delay on the host's clock (a `TestClock` in tests). Timers are
    /// values, so they survive a snapshot and run the same on a worker.
    case after(Duration, id: EffectID?, send: Action)
    /// A Codable request run by the handler registered for its type, in this process or on
    /// another worker of a topology; its result comes back as an action. Build it with
    /// ``io(id:_:result:)``.
    case io(IOWork, id: EffectID?)

    /// An io request with the mapping of its result to an action, its request type erased.
    public struct IOWork: Sendable {
        let requestName: String
        let request: any IORequest
        let run: @Sendable (any IOPerformer, EffectID) async -> Action
        /// The action the result becomes when the worker restarted while it was in flight.
        let interrupted: @Sendable () -> Action
        /// What the request's type declares for a restart while it is in flight.
        let onInterruption: IOInterruption

        /// The name of the request's type, as handlers are registered under it.
        public var name: String { requestName }

        func map<B: Sendable>(_ transform: @escaping @Sendable (Action) -> B) -> TeaEffect<B, Environment>.IOWork {
            let (run, interrupted) = (self.run, self.interrupted)
            return .init(requestName: requestName, request: request, run: { performer, id in
                transform(await run(performer, id))
            }, interrupted: { transform(interrupted()) }, onInterruption: onInterruption)
        }

        func pullback<Outer: Sendable>() -> TeaEffect<Action, Outer>.IOWork {
            .init(requestName: requestName, request: request, run: run, interrupted: interrupted, onInterruption: onInterruption)
        }
    }

    /// Async work: a closure that receives the environment and sends actions back.
    public struct Work: Sendable {
        let run: @Sendable (Environment, Send<Action>) async throws -> Void
        let onError: (@Sendable (any Error) -> Action)?

        init(
            onError: (@Sendable (any Error) -> Action)?,
            run: @escaping @Sendable (Environment, Send<Action>) async throws -> Void
        ) {
            self.run = run
            self.onError = onError
        }

        static func single(
            _ body: @escaping @Sendable (Environment) async throws -> Action?,
            catch onError: (@Sendable (any Error) -> Action)?
        ) -> Work {
            Work(onError: onError) { env, send in
                if let action = try await body(env) { try send(action) }
            }
        }

        /// `true` when an error the work throws becomes an action instead of failing the machine.
        public var catchesErrors: Bool { onError != nil }

        func map<B: Sendable>(_ transform: @escaping @Sendable (Action) -> B) -> TeaEffect<B, Environment>.Work {
            let run = self.run
            var mappedError: (@Sendable (any Error) -> B)?
            if let handler = onError {
                mappedError = { error in transform(handler(error)) }
            }
            return TeaEffect<B, Environment>.Work(onError: mappedError) { env, send in
                try await run(env, Send<Action> { action in try send(transform(action)) })
            }
        }

        func pullback<Outer: Sendable>(
            _ toLocal: @escaping @Sendable (Outer) -> Environment
        ) -> TeaEffect<Action, Outer>.Work {
            let run = self.run
            return .init(onError: onError) { env, send in try await run(toLocal(env), send) }
        }
    }
}

// MARK: - Constructors

extension TeaEffect {
    /// A single async result turned into an action (none when `body` returns `nil`).
    /// - Parameters:
    ///   - body: The work; it receives the environment.
    ///   - catch: Turns a thrown error into an action. Without it the error is logged and the machine keeps running.
    public static func task(
        _ body: @escaping @Sendable (Environment) async throws -> Action?,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect {
        .task(.single(body, catch: `catch`))
    }

    /// A single async result turned into an action, for programs without an environment.
    public static func task(
        _ body: @escaping @Sendable () async throws -> Action?,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect where Environment == Void {
        .task(.single({ _ in try await body() }, catch: `catch`))
    }

    /// A single async result under `id`: `.cancellable({ env in .results(try await env.search(q)) }, "search")`.
    /// Starting another effect with the same id replaces this one; ``cancel(_:)`` cancels it.
    /// - Parameters:
    ///   - body: The work; it receives the environment.
    ///   - id: Names the work for cancel and replace.
    ///   - catch: Turns a thrown error into an action. Without it the error is logged and the machine keeps running.
    public static func cancellable(
        _ body: @escaping @Sendable (Environment) async throws -> Action?,
        _ id: EffectID,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect {
        .cancellable(.single(body, catch: `catch`), id)
    }

    /// A single async result under `id`, for programs without an environment.
    public static func cancellable(
        _ body: @escaping @Sendable () async throws -> Action?,
        _ id: EffectID,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect where Environment == Void {
        .cancellable(.single({ _ in try await body() }, catch: `catch`), id)
    }

    /// Delivers the elements of a sequence the reducer already built (SwiftTea's spelling).
    ///
    /// An `AsyncStream`'s build closure runs when the stream is created, that is inside the
    /// reducer; prefer passing a closure that builds the sequence, which the host calls when it
    /// starts the effect, so the reducer stays pure.
    public static func stream<S: AsyncSequence & Sendable>(
        _ sequence: S,
        id: EffectID,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect where S.Element == Action {
        .stream(Work(onError: `catch`) { _, send in
            for try await action in sequence { try send(action) }
        }, id: id)
    }

    /// Delivers the elements of the sequence `make` builds from the environment when the effect
    /// starts: `.stream({ env in env.locations.updates() }, id: "location-updates")`.
    /// - Parameters:
    ///   - make: Builds the sequence; called by the host, never by the reducer.
    ///   - id: Names the stream so ``cancel(_:)`` can end it.
    ///   - catch: Turns an error the sequence throws into an action. Without it the error is logged and the machine keeps running.
    public static func stream<S: AsyncSequence & Sendable>(
        _ make: @escaping @Sendable (Environment) -> S,
        id: EffectID,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect where S.Element == Action {
        .stream(Work(onError: `catch`) { env, send in
            for try await action in make(env) { try send(action) }
        }, id: id)
    }

    /// Delivers the elements of the sequence `make` builds when the effect starts, for programs
    /// without an environment.
    public static func stream<S: AsyncSequence & Sendable>(
        _ make: @escaping @Sendable () -> S,
        id: EffectID,
        catch: (@Sendable (any Error) -> Action)? = nil
    ) -> TeaEffect where S.Element == Action, Environment == Void {
        .stream({ (_: Void) in make() }, id: id, catch: `catch`)
    }
}

// MARK: - Timers and io

extension TeaEffect {
    /// Sends `action` after `delay` on the host's clock: `.after(.seconds(30), send: .refresh)`.
    /// A later timer under the same id replaces it; ``cancel(_:)`` stops it.
    public static func after(_ delay: Duration, send action: Action) -> TeaEffect {
        .after(delay, id: nil, send: action)
    }

    /// A Codable request executed by the handler registered for `R`, locally or, in a topology,
    /// on the worker that serves it; `result` turns its outcome into an action. Failures arrive as
    /// data (``IOFailure``), never as a thrown error.
    ///
    /// ```swift
    /// return (next, .io(id: "fetch", FetchItems(page: 1)) { result in
    ///     switch result {
    ///     case .success(let items): .loaded(items)
    ///     case .failure(let failure): .failed(failure.message)
    ///     }
    /// })
    /// ```
    /// - Parameters:
    ///   - id: Names the request for cancel and replace; anonymous when `nil`.
    ///   - request: What to do.
    ///   - result: The action the outcome becomes.
    public static func io<R: IORequest>(
        id: EffectID? = nil,
        _ request: R,
        result: @escaping @Sendable (Result<R.Response, IOFailure>) -> Action
    ) -> TeaEffect {
        .io(IOWork(requestName: R.name, request: request, run: { performer, effect in
            result(await performer.perform(request, effect: effect))
        }, interrupted: { result(.failure(.interrupted(R.name))) }, onInterruption: R.onInterruption), id: id)
    }
}

// MARK: - Composition

extension TeaEffect {
    /// The same work, with every action it produces wrapped by `transform`: how a parent reducer
    /// runs a child's effect (`userEffect.map(AppAction.user)`).
    public func map<B: Sendable>(_ transform: @escaping @Sendable (Action) -> B) -> TeaEffect<B, Environment> {
        switch self {
        case .none: .none
        case .unhandled: .unhandled
        case .task(let work): .task(work.map(transform))
        case .cancellable(let work, let id): .cancellable(work.map(transform), id)
        case .cancel(let id): .cancel(id)
        case .sequence(let effects): .sequence(effects.map { $0.map(transform) })
        case .merge(let effects): .merge(effects.map { $0.map(transform) })
        case .stream(let work, let id): .stream(work.map(transform), id: id)
        case .after(let delay, let id, let action): .after(delay, id: id, send: transform(action))
        case .io(let work, let id): .io(work.map(transform), id: id)
        }
    }

    /// The same work, run in a parent's environment: `toLocal` extracts this effect's environment
    /// from the parent's (`profileEffect.pullback { $0.profile }`).
    public func pullback<Outer: Sendable>(
        _ toLocal: @escaping @Sendable (Outer) -> Environment
    ) -> TeaEffect<Action, Outer> {
        switch self {
        case .none: .none
        case .unhandled: .unhandled
        case .task(let work): .task(work.pullback(toLocal))
        case .cancellable(let work, let id): .cancellable(work.pullback(toLocal), id)
        case .cancel(let id): .cancel(id)
        case .sequence(let effects): .sequence(effects.map { $0.pullback(toLocal) })
        case .merge(let effects): .merge(effects.map { $0.pullback(toLocal) })
        case .stream(let work, let id): .stream(work.pullback(toLocal), id: id)
        case .after(let delay, let id, let action): .after(delay, id: id, send: action)
        case .io(let work, let id): .io(work.pullback(), id: id)
        }
    }

    /// The Grove effect that runs this one in machine `M`, for using a SwiftTea-style effect in a
    /// native ``Machine``.
    public func machineEffect<M: Machine>(
        for machine: M.Type = M.self
    ) -> MachineEffect<M> where M.Event == Action, M.Env == Environment {
        switch self {
        case .none: .none
        case .unhandled: .unhandled
        case .task(let work): work.effect(id: nil, kind: .task)
        case .cancellable(let work, let id): work.effect(id: id, kind: .task)
        case .cancel(let id): .cancel(id)
        case .sequence(let effects): .sequence(effects.map { $0.machineEffect(for: M.self) })
        case .merge(let effects): .merge(effects.map { $0.machineEffect(for: M.self) })
        case .stream(let work, let id): work.effect(id: id, kind: .stream)
        case .after(let delay, let id, let action): .after(delay, id: id, send: action)
        case .io(let work, let id):
            MachineEffect(kind: .io(id: id, IOCall(requestName: work.requestName, request: work.request, run: work.run,
                                                       interrupted: work.interrupted, onInterruption: work.onInterruption)))
        }
    }
}

extension TeaEffect.Work {
    func effect<M: Machine>(
        id: EffectID?, kind: MachineEffect<M>.WorkKind
    ) -> MachineEffect<M> where M.Event == Action, M.Env == Environment {
        let policy: MachineEffect<M>.ErrorPolicy = onError.map { .map($0) } ?? .failureEvent
        return MachineEffect(kind: .work(.init(id: id, kind: kind, onError: policy, run: run)))
    }
}

public import Grove
public import GroveRuntime
import Synchronization

/// Handlers for the example machines' io requests, backed by memory: for demos, and for tests
/// that do not need to control when each answer arrives (``PendingCalls`` does that).
///
/// ```swift
/// let host = MachineHost(AuthFlow.self, io: ExampleHandlers.inMemory())
/// ```
public enum ExampleHandlers {
    /// An account the in-memory authentication service knows.
    public struct Account: Sendable, Hashable {
        /// Who signs in.
        public var user: User
        /// The password that signs them in.
        public var password: String
        /// The second-factor code the account must enter; `nil` when it has no second factor.
        public var twoFactorCode: String?

        /// An account for `user`, with a second factor when `twoFactorCode` is given.
        public init(user: User, password: String, twoFactorCode: String? = nil) {
            self.user = user
            self.password = password
            self.twoFactorCode = twoFactorCode
        }
    }

    /// What the in-memory ``FetchItems`` handler returns by default.
    public static let demoItems: [DataItem] = [
        DataItem(id: "1", title: "Oak"),
        DataItem(id: "2", title: "Birch"),
        DataItem(id: "3", title: "Rowan"),
    ]

    /// The accounts the in-memory authentication service knows by default: Ada signs in with a
    /// password only, Grace also needs the code `424242`.
    public static let demoAccounts: [Account] = [
        Account(user: User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com"), password: "analytical"),
        Account(user: User(id: "u-grace", name: "Grace Hopper", email: "grace@example.com"),
                password: "compiler", twoFactorCode: "424242"),
    ]

    /// Handlers for every example request: ``FetchItems``, ``ValidateForm``, ``SubmitForm``, ``Authenticate``,
    /// ``VerifyTwoFactor``, ``FetchData`` and ``SessionWork``.
    ///
    /// ``SubmitForm`` fails with the code `rejected` for a form that breaks a validation rule.
    /// ``FetchData`` answers with a sequence number that grows by one per call and the current
    /// time of `now`. ``SessionWork`` finishes after ``SessionWork/demoDuration``, unless cancelled.
    /// - Parameters:
    ///   - items: What ``FetchItems`` returns.
    ///   - accounts: Who can sign in.
    ///   - lockedEmails: Accounts the service reports as locked.
    ///   - now: The service's clock, for ``PolledData/updatedAt``; pass a test clock's `now` in
    ///     tests.
    public static func inMemory(
        items: [DataItem] = demoItems,
        accounts: [Account] = demoAccounts,
        lockedEmails: Set<String> = [],
        now: @escaping @Sendable () -> Timestamp = { WallClock().now() }
    ) -> IOHandlers {
        let backend = Backend()
        var handlers = IOHandlers()
        handlers.register(FetchItems.self) { _ in items }
        handlers.register(ValidateForm.self) { request in request.form.validationErrors }
        handlers.register(SubmitForm.self) { request in
            guard request.form.isValid else {
                let broken = request.form.validationErrors.map(\.rawValue).joined(separator: ", ")
                throw IOFailure(.rejected, "the form breaks these rules: \(broken); correct them and submit again")
            }
            return SubmitForm.Receipt(confirmation: "FORM-\(backend.next())")
        }
        handlers.register(Authenticate.self) { request in
            if lockedEmails.contains(request.email) { return .accountLocked }
            let account = accounts.first { $0.user.email == request.email && $0.password == request.password }
            guard let account else { return .invalidCredentials(message: "wrong email or password") }
            guard account.twoFactorCode != nil else { return .authenticated(account.user) }
            let token = "2fa-\(account.user.id)-\(backend.next())"
            backend.pending(token, account)
            return .twoFactorRequired(token: token)
        }
        handlers.register(VerifyTwoFactor.self) { request in
            guard let account = backend.account(for: request.token) else {
                return .invalidCode(message: "this sign-in has expired; sign in again")
            }
            guard account.twoFactorCode == request.code else { return .invalidCode(message: "wrong code") }
            backend.finish(request.token)
            return .verified(account.user)
        }
        handlers.register(FetchData.self) { _ in
            let sequence = backend.next()
            return PolledData(sequence: sequence, updatedAt: now(), body: "update \(sequence)")
        }
        handlers.register(SessionWork.self) { request in
            try await Task.sleep(for: SessionWork.demoDuration)
            return "\(request.operation) done"
        }
        return handlers
    }

    /// The mutable side of the in-memory services.
    private final class Backend: Sendable {
        private struct Inner {
            var counter = 0
            var twoFactor: [String: Account] = [:]
        }

        private let inner = Mutex(Inner())

        func next() -> Int {
            inner.withLock { state in
                state.counter += 1
                return state.counter
            }
        }

        func pending(_ token: String, _ account: Account) { inner.withLock { $0.twoFactor[token] = account } }
        func account(for token: String) -> Account? { inner.withLock { $0.twoFactor[token] } }
        func finish(_ token: String) { _ = inner.withLock { $0.twoFactor.removeValue(forKey: token) } }
    }
}

extension IOFailure.Code {
    /// The service refused the request as it stands; sending it again unchanged fails again.
    public static let rejected = IOFailure.Code(rawValue: "rejected")
}

/// An io handler whose calls wait until the test answers them, so the test decides when, and in
/// which order, results arrive: a reload that overtakes a slow fetch, a logout while a sign-in is
/// in flight.
///
/// The handler ignores cancellation on purpose, like work that swallows it, so tests show that
/// the runtime, not the handler's good manners, keeps cancelled and replaced requests from
/// delivering. It records the cancellation, which tests assert with ``Call/cancellation(within:)``.
/// Answer every call, cancelled ones too: an unanswered call keeps its task suspended.
///
/// ```swift
/// let fetches = PendingCalls<FetchItems>()
/// var handlers = IOHandlers()
/// handlers.register(FetchItems.self) { try await fetches.handle($0) }
/// // … the machine starts a fetch …
/// let call = try #require(await fetches.next())
/// await call.succeed([item])
/// ```
public final class PendingCalls<R: IORequest>: Sendable {
    /// One request the handler received and holds until answered.
    public final class Call: Sendable {
        /// The request as the handler received it.
        public let request: R
        /// 1 for the first call the handler received, 2 for the next, and so on.
        public let number: Int

        let answer = Latch<Result<R.Response, IOFailure>>()
        let returned = Latch<Void>()
        let cancelled = Latch<Void>()

        init(request: R, number: Int) {
            self.request = request
            self.number = number
        }

        /// Answers with `response` and waits (up to `timeout`) until the handler has handed it to
        /// the runtime. Later answers to the same call are ignored.
        public func succeed(_ response: R.Response, within timeout: Duration = .seconds(10)) async {
            await respond(.success(response), within: timeout)
        }

        /// Answers with `failure`; see ``succeed(_:within:)``.
        public func fail(_ failure: IOFailure, within timeout: Duration = .seconds(10)) async {
            await respond(.failure(failure), within: timeout)
        }

        private func respond(_ result: Result<R.Response, IOFailure>, within timeout: Duration) async {
            answer.fulfill(result)
            _ = await returned.wait(timeout: timeout)
        }

        /// `true` once the runtime cancelled the task running this call.
        public var isCancelled: Bool { cancelled.value != nil }

        /// Waits until the runtime cancels the task running this call.
        /// - Returns: `false` when `timeout` passed first.
        public func cancellation(within timeout: Duration = .seconds(10)) async -> Bool {
            await cancelled.wait(timeout: timeout) != nil
        }
    }

    private struct Inner {
        var slots: [Latch<Call>] = []
        var arrived = 0
        var taken = 0
    }

    private let inner = Mutex(Inner())

    /// A handler with no calls yet.
    public init() {}

    /// The handler: `handlers.register(R.self) { try await calls.handle($0) }`. Returns or throws
    /// what the test answers for this call.
    public func handle(_ request: R) async throws -> R.Response {
        let (call, slot) = inner.withLock { state in
            let call = Call(request: request, number: state.arrived + 1)
            let slot = Self.slot(state.arrived, in: &state)
            state.arrived += 1
            return (call, slot)
        }
        slot.fulfill(call)
        let result = await withTaskCancellationHandler {
            await call.answer.wait(timeout: nil)
        } onCancel: {
            call.cancelled.fulfill(())
        }
        call.returned.fulfill(())
        guard let result else { throw CancellationError() }
        return try result.get()
    }

    /// The next call not taken yet, in order of arrival, waiting up to `timeout` for it to arrive.
    /// - Returns: `nil` when no call arrived in time.
    public func next(within timeout: Duration = .seconds(10)) async -> Call? {
        let slot = inner.withLock { state in
            let slot = Self.slot(state.taken, in: &state)
            state.taken += 1
            return slot
        }
        return await slot.wait(timeout: timeout)
    }

    /// How many calls the handler has received.
    public var count: Int { inner.withLock { $0.arrived } }

    private static func slot(_ index: Int, in state: inout Inner) -> Latch<Call> {
        while state.slots.count <= index { state.slots.append(Latch()) }
        return state.slots[index]
    }
}

/// A value set once and awaited by any number of tasks, each with its own deadline.
final class Latch<Value: Sendable>: Sendable {
    private struct Inner {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var expired: Set<Int> = []
        var nextWaiter = 0
    }

    private let inner = Mutex(Inner())

    init() {}

    /// The value, once set.
    var value: Value? { inner.withLock { $0.value } }

    /// Sets the value and wakes the waiters. Only the first call has an effect.
    func fulfill(_ value: Value) {
        let waiters: [CheckedContinuation<Value?, Never>] = inner.withLock { state in
            guard state.value == nil else { return [] }
            state.value = value
            return Array(Swift.exchange(&state.waiters, with: [:]).values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Waits for the value, ignoring task cancellation.
    /// - Parameter timeout: How long to wait; `nil` waits until the value is set.
    /// - Returns: The value, or `nil` when `timeout` passed first.
    func wait(timeout: Duration?) async -> Value? {
        let id = inner.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = timeout.map { timeout in
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(id)
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            let resolved: Value?? = inner.withLock { state in
                if let value = state.value { return .some(value) }
                if state.expired.remove(id) != nil { return .some(nil) }
                state.waiters[id] = continuation
                return .none
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }

    private func expire(_ id: Int) {
        let waiter = inner.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                if state.value == nil { state.expired.insert(id) }
                return nil as CheckedContinuation<Value?, Never>?
            }
            return waiter
        }
        waiter?.resume(returning: nil)
    }
}

public import Grove

// The io requests of the seed-pattern machines, and the values they carry. Every type here is
// Codable because requests and responses cross process boundaries: a machine on one worker asks,
// a handler on another answers.

/// A record the ``DataLoader`` lists and the ``AppNavigator`` can show in detail.
public struct DataItem: Codable, Sendable, Hashable, Identifiable {
    /// Stable identity of the record.
    public var id: String
    /// What a list shows for it.
    public var title: String

    /// An item with the given identity and title.
    public init(id: String, title: String) {
        self.id = id
        self.title = title
    }
}

/// A signed-in user, as the authentication service describes them.
public struct User: Codable, Sendable, Hashable, Identifiable {
    /// Stable identity of the user.
    public var id: String
    /// Display name.
    public var name: String
    /// The address the user signs in with.
    public var email: String

    /// A user with the given identity, name and email.
    public init(id: String, name: String, email: String) {
        self.id = id
        self.name = name
        self.email = email
    }
}

// MARK: - Loading

/// Fetches the items a ``DataLoader`` shows.
///
/// A read with no effect on the service, so it may run twice: a loader restored from its store
/// while a fetch was in flight fetches again (``IOInterruption/reissue``) rather than failing.
/// ``Authenticate`` keeps the default (``IOInterruption/fail``): each attempt counts against the
/// account, so only the machine may decide to try again.
public struct FetchItems: IORequest, Hashable {
    public typealias Response = [DataItem]

    /// Sent again after a restart: fetching twice is harmless.
    public static var onInterruption: IOInterruption { .reissue }

    /// `true` when the user asked for fresh data (reload): the service should bypass its caches.
    public var forceRefresh: Bool

    /// - Parameter forceRefresh: `true` to bypass the service's caches.
    public init(forceRefresh: Bool) { self.forceRefresh = forceRefresh }
}

// MARK: - Form

/// Checks a ``UserForm``'s data against the service's rules; answers with the rules it breaks.
public struct ValidateForm: IORequest, Hashable {
    public typealias Response = [UserForm.ValidationError]

    /// The data as the user last left it.
    public var form: UserForm.FormData

    /// - Parameter form: The data to check.
    public init(form: UserForm.FormData) { self.form = form }
}

/// Sends a completed ``UserForm`` to the service that stores it.
public struct SubmitForm: IORequest, Hashable {
    public typealias Response = Receipt

    /// The validated form.
    public var form: UserForm.FormData

    /// - Parameter form: The validated form.
    public init(form: UserForm.FormData) { self.form = form }

    /// What the service answers when it accepted the form.
    public struct Receipt: Codable, Sendable, Hashable {
        /// A reference the user can quote.
        public var confirmation: String

        /// - Parameter confirmation: The reference the service assigned.
        public init(confirmation: String) { self.confirmation = confirmation }
    }
}

// MARK: - Authentication

/// Checks an email and password with the authentication service.
public struct Authenticate: IORequest, Hashable {
    public typealias Response = Outcome

    /// The address the user signs in with.
    public var email: String
    /// The password as typed.
    public var password: String

    /// A sign-in attempt with the given credentials.
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }

    /// The service's verdict. Wrong credentials are an answer, not a failure: only an unreachable
    /// or broken service produces an ``IOFailure``.
    public enum Outcome: Codable, Sendable, Hashable {
        /// The credentials are right and no second factor is needed.
        case authenticated(User)
        /// The credentials are right; the user must now enter the code sent to them. `token`
        /// identifies this half-finished sign-in in ``VerifyTwoFactor``.
        case twoFactorRequired(token: String)
        /// The email or password is wrong.
        case invalidCredentials(message: String)
        /// The service has locked the account.
        case accountLocked
    }
}

/// Checks a second-factor code for a sign-in that ``Authenticate`` started.
public struct VerifyTwoFactor: IORequest, Hashable {
    public typealias Response = Outcome

    /// The token from ``Authenticate/Outcome/twoFactorRequired(token:)``.
    public var token: String
    /// The code the user entered.
    public var code: String

    /// A verification of `code` for the sign-in named by `token`.
    public init(token: String, code: String) {
        self.token = token
        self.code = code
    }

    /// The service's verdict on the code.
    public enum Outcome: Codable, Sendable, Hashable {
        /// The code is right: the sign-in is complete.
        case verified(User)
        /// The code is wrong or expired.
        case invalidCode(message: String)
    }
}

// MARK: - Polling

/// Fetches the latest data a ``PollingService`` keeps fresh.
public struct FetchData: IORequest, Hashable {
    public typealias Response = PolledData

    /// The `updatedAt` of the last data received, so the service can answer with what changed;
    /// `nil` on the first fetch.
    public var since: Timestamp?

    /// - Parameter since: The `updatedAt` of the last data received, if any.
    public init(since: Timestamp?) { self.since = since }
}

/// One answer of the polled service.
public struct PolledData: Codable, Sendable, Hashable {
    /// Increases with every answer of the service.
    public var sequence: Int
    /// When the service's data last changed, by the service's clock.
    public var updatedAt: Timestamp
    /// The data itself.
    public var body: String

    /// One answer of the polled service.
    public init(sequence: Int, updatedAt: Timestamp, body: String) {
        self.sequence = sequence
        self.updatedAt = updatedAt
        self.body = body
    }
}

// MARK: - Failures

extension IOFailure {
    /// Whether sending the same request again may succeed.
    ///
    /// A thrown handler error, a lost worker or coordinator, a timeout or a busy io worker is transient. A missing handler, a codec error or a
    /// code of the service's own (a handler throwing `IOFailure`) means the same request fails
    /// again, so offering "retry" would only frustrate the user.
    var isRetryable: Bool {
        code == .handlerFailed || code == .workerLost || code == .coordinatorLost || code == .timeout || code == .busy
    }
}

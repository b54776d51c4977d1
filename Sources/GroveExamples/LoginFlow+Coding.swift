// Codable and Equatable for the seed's LoginFlow, whose states and events hold `any Error`.
// Each enum is coded through a mirror with the same cases in which the error is a
// `LoginFlow.Failure`, so the JSON is what the compiler synthesizes for such an enum
// (`{"failed":{"_0":{"message":"…"}}}`). Two errors are equal when their descriptions are.

extension LoginFlow.Failure {
    /// `error` itself when it is a failure already, otherwise its description.
    init(describing error: any Error) {
        self = (error as? LoginFlow.Failure) ?? LoginFlow.Failure(String(describing: error))
    }
}

extension LoginFlow.State: Codable, Equatable {
    private enum Coded: Codable, Equatable {
        case start
        case enteringCredentials(email: String, password: String)
        case authenticating(email: String, password: String)
        case authenticated(User)
        case failed(LoginFlow.Failure)
        case completed
    }

    private var coded: Coded {
        switch self {
        case .start: .start
        case .enteringCredentials(let email, let password): .enteringCredentials(email: email, password: password)
        case .authenticating(let email, let password): .authenticating(email: email, password: password)
        case .authenticated(let user): .authenticated(user)
        case .failed(let error): .failed(LoginFlow.Failure(describing: error))
        case .completed: .completed
        }
    }

    private init(_ coded: Coded) {
        switch coded {
        case .start: self = .start
        case .enteringCredentials(let email, let password): self = .enteringCredentials(email: email, password: password)
        case .authenticating(let email, let password): self = .authenticating(email: email, password: password)
        case .authenticated(let user): self = .authenticated(user)
        case .failed(let failure): self = .failed(failure)
        case .completed: self = .completed
        }
    }

    public init(from decoder: any Decoder) throws { self.init(try Coded(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try coded.encode(to: encoder) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.coded == rhs.coded }
}

extension LoginFlow.Event: Codable, Equatable {
    private enum Coded: Codable, Equatable {
        case startLogin
        case updateEmail(String)
        case updatePassword(String)
        case submitCredentials
        case authenticationSucceeded(User)
        case authenticationFailed(LoginFlow.Failure)
        case loginComplete
    }

    private var coded: Coded {
        switch self {
        case .startLogin: .startLogin
        case .updateEmail(let email): .updateEmail(email)
        case .updatePassword(let password): .updatePassword(password)
        case .submitCredentials: .submitCredentials
        case .authenticationSucceeded(let user): .authenticationSucceeded(user)
        case .authenticationFailed(let error): .authenticationFailed(LoginFlow.Failure(describing: error))
        case .loginComplete: .loginComplete
        }
    }

    private init(_ coded: Coded) {
        switch coded {
        case .startLogin: self = .startLogin
        case .updateEmail(let email): self = .updateEmail(email)
        case .updatePassword(let password): self = .updatePassword(password)
        case .submitCredentials: self = .submitCredentials
        case .authenticationSucceeded(let user): self = .authenticationSucceeded(user)
        case .authenticationFailed(let failure): self = .authenticationFailed(failure)
        case .loginComplete: self = .loginComplete
        }
    }

    public init(from decoder: any Decoder) throws { self.init(try Coded(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try coded.encode(to: encoder) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.coded == rhs.coded }
}

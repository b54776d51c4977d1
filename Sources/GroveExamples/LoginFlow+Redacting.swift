public import Grove

extension LoginFlow.State: Redacting {
    /// The state with the password replaced by ``Redaction/placeholder``: what a worker replies
    /// and publishes. The email stays, and so does an empty password.
    public var redacted: Self {
        switch self {
        case .enteringCredentials(let email, let password): .enteringCredentials(email: email, password: Redaction.hiding(password))
        case .authenticating(let email, let password): .authenticating(email: email, password: Redaction.hiding(password))
        case .start, .authenticated, .failed, .completed: self
        }
    }
}

extension LoginFlow.Event: Redacting {
    /// The event with the password replaced by ``Redaction/placeholder``: what an audit log
    /// writes and a dead letter shows.
    public var redacted: Self {
        switch self {
        case .updatePassword(let password): .updatePassword(Redaction.hiding(password))
        case .startLogin, .updateEmail, .submitCredentials, .authenticationSucceeded, .authenticationFailed, .loginComplete: self
        }
    }
}

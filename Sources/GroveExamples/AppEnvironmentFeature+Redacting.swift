public import Grove

extension UserFeature.Action: Redacting {
    /// The action with the password replaced by ``Redaction/placeholder``: what an audit log
    /// writes and a dead letter shows.
    public var redacted: Self {
        switch self {
        case .login(let email, let password): .login(email: email, password: Redaction.hiding(password))
        case .logout, .userLoaded, .loginFailed: self
        }
    }
}

extension AppFeature.Action: Redacting {
    /// The action with the user feature's secrets redacted.
    public var redacted: Self {
        switch self {
        case .user(let action): .user(action.redacted)
        case .initializeApp, .preferencesLoaded, .preferencesFailed: self
        }
    }
}

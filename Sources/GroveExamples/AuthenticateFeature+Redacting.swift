public import Grove

extension AuthenticateFeature.Input: Redacting {
    /// The input with the password replaced by ``Redaction/placeholder``: what an audit log
    /// writes and a dead letter shows.
    public var redacted: Self {
        switch self {
        case .signIn(let username, let password): .signIn(username: username, password: Redaction.hiding(password))
        case .signOut: self
        }
    }
}

public import Grove

extension UserPostsFeature.Token: Redacting {
    /// The token with its text replaced by ``Redaction/placeholder``.
    public var redacted: Self { Self(Redaction.hiding(value)) }
}

extension UserPostsFeature.State: Redacting {
    /// The state with the session token redacted: what a worker replies and publishes.
    public var redacted: Self {
        switch self {
        case .fetchingUser(let token): .fetchingUser(token: token.redacted)
        case .fetchingPosts(let user, let token): .fetchingPosts(user: user, token: token.redacted)
        case .ready, .authenticating, .complete, .failed: self
        }
    }
}

extension UserPostsFeature.Input: Redacting {
    /// The input with the password redacted.
    public var redacted: Self {
        switch self {
        case .start(let email, let password): .start(email: email, password: Redaction.hiding(password))
        }
    }
}

extension UserPostsFeature.IOResult: Redacting {
    /// The result with the session token redacted.
    public var redacted: Self {
        switch self {
        case .token(let token): .token(token.redacted)
        case .user, .posts, .failure: self
        }
    }
}

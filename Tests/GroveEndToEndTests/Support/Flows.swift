import GroveWire

/// Event sequences of the example machines that several suites share.
extension Cluster {
    /// AuthFlow: starts a sign-in, types the credentials and sends them.
    /// - Returns: The state `login` committed (`authenticating` while the request runs).
    @discardableResult
    func login(_ address: String, email: String, password: String) async throws -> JSONValue {
        try await send(address, "startLogin")
        try await send(address, #"{"updateEmail":{"_0":"\#(email)"}}"#)
        try await send(address, #"{"updatePassword":{"_0":"\#(password)"}}"#)
        return try await send(address, "login")
    }

    /// AuthFlow: enters a second-factor code and submits it.
    @discardableResult
    func submitCode(_ address: String, _ code: String) async throws -> JSONValue {
        try await send(address, #"{"updateTwoFactorCode":{"_0":"\#(code)"}}"#)
        return try await send(address, "submitTwoFactor")
    }
}

extension JSONValue {
    /// The `step` case of an AuthFlow state.
    var step: String? { self["step"]?.caseName }
}

/// What the in-memory FetchItems handler of fsm-worker returns.
let demoItems = json(#"[{"id":"1","title":"Oak"},{"id":"2","title":"Birch"},{"id":"3","title":"Rowan"}]"#)
let loadedDemoItems = json(#"{"loaded":{"_0":[{"id":"1","title":"Oak"},{"id":"2","title":"Birch"},{"id":"3","title":"Rowan"}]}}"#)
let loading = json(#"{"loading":{}}"#)
let idle = json(#"{"idle":{}}"#)

func isLoaded(_ state: JSONValue) -> Bool { state == loadedDemoItems }

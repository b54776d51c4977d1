import GroveCluster
import GroveWire

/// The JSON of workers' messages that the coordinator reads: what it checks in a `state-changed`
/// or `machine` payload (its `address` and `worker`) and what it routes an `output` on. Two
/// readers may take different values from one text when a key comes twice
/// (`{"address":"a","address":"b"}`: the first for one parser, the last for Foundation's or
/// Python's), so where the coordinator reads, a key given twice is refused, naming its JSON path,
/// and what it checks must be one JSON value with nothing after it: what a watcher or a snapshot
/// reads is then what the coordinator checked.
///
/// Everything else a worker writes in JSON is read by one reader only, or by the coordinator
/// for nothing it checks or routes on: replies go to their client as bytes, an io request's
/// body to the worker that runs it (its name and effect id are a binary head), instance
/// reports and registrations only to the coordinator, an io result's failure and a cancel's
/// reason only into the effect events the coordinator writes itself.
extension CoordinatorCore {
    /// Why a `state-changed` or `machine` payload may not be published for `address`, from
    /// `worker`; `nil` when it is one JSON object whose `address` and `worker`, when given, are
    /// those, each key once.
    ///
    /// The way Swift workers write a state change (`{"address":"…","worker":"…","state":…}`,
    /// neither name needing an escape) is checked on the bytes: the beginning compared, the
    /// state scanned to its end (``JSONScan``), nothing allocated. Any other way is parsed.
    static func payloadProblem(_ payload: [UInt8], names address: String, worker: String) -> String? {
        if let start = prefixEnd(payload, address: address, worker: worker), payload.last == UInt8(ascii: "}") {
            let state = Array(#""state":"#.utf8)
            if payload[start...].starts(with: state),
               payload.withUnsafeBufferPointer({ JSONScan.end(ofValueIn: $0, from: start + state.count) }) == payload.count - 1 {
                return nil
            }
        }
        let members: [String: JSONValue]
        switch parsed(payload) {
        case .success(.object(let object)): members = object
        case .success: return "its payload is not a JSON object"
        case .failure(let problem): return problem.description
        }
        // Bytes, not Swift's equality: a watcher reads the bytes.
        func names(_ key: String, _ expected: String) -> Bool {
            guard let named = members[key] else { return true }
            if case .string(let text) = named { return text.utf8.elementsEqual(expected.utf8) }
            return false
        }
        guard names("address", address), names("worker", worker) else {
            return "its payload's address or worker is not \(shown(address)) and \(worker), the message's address and its sender"
        }
        return nil
    }

    /// The output of an `output` payload (`{"output":…}`), for routing; or why it is refused.
    /// Parsed only for a machine that routes start from. The routes match its case and may
    /// carry it on as the target's event, so no key may come twice anywhere in it.
    static func routedOutput(_ payload: [UInt8]) -> Result<JSONValue, RoutedOutputProblem> {
        switch parsed(payload, anywhere: true) {
        case .success(.object(let members)):
            guard let output = members["output"] else { return .failure(.notAnOutput) }
            return .success(output)
        case .success: return .failure(.notAnOutput)
        case .failure(.notJSON): return .failure(.notAnOutput)
        case .failure(.twice(let problem)): return .failure(.refused(problem))
        }
    }

    enum RoutedOutputProblem: Error {
        /// Not JSON, or not `{"output":…}`: nothing to route; published as it is.
        case notAnOutput
        /// A key twice: refused.
        case refused(String)
    }

    enum ParseProblem: Error {
        case notJSON(String)
        case twice(String)

        var description: String {
            switch self {
            case .notJSON(let text), .twice(let text): text
            }
        }
    }

    /// `payload` parsed strictly; a key given twice (at the top level, or `anywhere`) is a
    /// problem naming its path.
    private static func parsed(_ payload: [UInt8], anywhere: Bool = false) -> Result<JSONValue, ParseProblem> {
        var parser = LocatingJSONParser(payload, document: "the payload", maximumDepth: JSONScan.maximumDepth)
        let value: JSONValue
        do {
            value = try parser.parse()
        } catch {
            return .failure(.notJSON("its payload is not JSON (\(error.message), at \(error.pathDescription))"))
        }
        if let twice = parser.duplicateKeys.first(where: { anywhere || $0.path.components.count == 1 }) {
            return .failure(.twice("its payload gives the key \(twice.pathDescription) twice (at \(twice.position(multiline: false))); "
                + "readers differ on which one counts, so a key may come once"))
        }
        return .success(value)
    }
}

import Foundation

// Codable and Equatable for seed 002's Result-based example, whose action and state hold
// `any Error`. As LoginFlow's: each is coded through a mirror in which the error is a
// `NetworkFailure`, so the JSON is what the compiler synthesizes for such a type
// (`{"dataFetched":{"_0":{"failure":{"_0":{"message":"offline"}}}}}`), and two errors are equal
// when their descriptions are.

/// An error that crossed a process boundary: its description.
public struct NetworkFailure: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for people.
    public var message: String

    /// A failure saying `message`.
    public init(_ message: String) { self.message = message }

    /// `error` itself when it is a failure already, otherwise its description.
    public init(describing error: any Error) {
        self = (error as? NetworkFailure) ?? NetworkFailure(String(describing: error))
    }

    public var description: String { message }
}

extension NetworkAction: Codable, Equatable {
    private enum Coded: Codable, Equatable {
        case fetchData
        case dataFetched(Fetched)
    }

    private enum Fetched: Codable, Equatable {
        case success(Data)
        case failure(NetworkFailure)
    }

    private var coded: Coded {
        switch self {
        case .fetchData: .fetchData
        case .dataFetched(.success(let data)): .dataFetched(.success(data))
        case .dataFetched(.failure(let error)): .dataFetched(.failure(NetworkFailure(describing: error)))
        }
    }

    private init(_ coded: Coded) {
        switch coded {
        case .fetchData: self = .fetchData
        case .dataFetched(.success(let data)): self = .dataFetched(.success(data))
        case .dataFetched(.failure(let failure)): self = .dataFetched(.failure(failure))
        }
    }

    public init(from decoder: any Decoder) throws { self.init(try Coded(from: decoder)) }

    public func encode(to encoder: any Encoder) throws { try coded.encode(to: encoder) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.coded == rhs.coded }
}

extension NetworkState: Codable, Equatable {
    private struct Coded: Codable, Equatable {
        var isLoading: Bool
        var data: Data?
        var error: NetworkFailure?
    }

    private var coded: Coded {
        Coded(isLoading: isLoading, data: data, error: error.map(NetworkFailure.init(describing:)))
    }

    public init(from decoder: any Decoder) throws {
        let coded = try Coded(from: decoder)
        self.init(isLoading: coded.isLoading, data: coded.data, error: coded.error)
    }

    public func encode(to encoder: any Encoder) throws { try coded.encode(to: encoder) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.coded == rhs.coded }
}

// What seed 003 leaves to the reader: the API service `Load(apiService:)` is built from.

/// Answers a load: the value of a numeric id is that number times ten; any other id fails.
struct ApiService {
    struct NotFound: Error, Equatable { var id: String }

    func load(id: String) async throws -> Int {
        guard let number = Int(id) else { throw NotFound(id: id) }
        return number * 10
    }
}

extension Load {
    /// The seed builds `Load(apiService:)`, which its `Load` does not declare.
    init(apiService: ApiService) {
        self.init(loadFunction: { id in try await apiService.load(id: id) })
    }
}

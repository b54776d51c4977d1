// Seed 000, Oak's "Common Patterns for State Machines": "Form Validation Pattern", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
import Grove

enum UserForm: EffectTransducer {
    struct FormData: Sendable {
        var name: String = ""
        var email: String = ""
        var phone: String = ""
        
        var isValid: Bool {
            !name.isEmpty && email.isValidEmail && phone.isValidPhone
        }
    }
    
    enum ValidationError: Error {
        case invalidEmail
        case invalidPhone
        case nameRequired
    }
    
    enum State: Terminable {
        case editing(FormData, errors: [ValidationError])
        case validating(FormData)
        case submitting(FormData)
        case submitted(result: SubmissionResult)
        case cancelled
        
        var isTerminal: Bool {
            switch self {
            case .submitted, .cancelled: return true
            case .editing, .validating, .submitting: return false
            }
        }
    }
    
    enum Event {
        case updateName(String)
        case updateEmail(String)
        case updatePhone(String)
        case validate
        case submit
        case validationComplete([ValidationError])
        case submissionComplete(SubmissionResult)
        case cancel
    }
    
    struct Env: Sendable {
        var submitForm: @Sendable (FormData) async throws -> SubmissionResult
        var validateForm: @Sendable (FormData) async -> [ValidationError]
    }
    
    static var initialState: State {
        .editing(FormData(), errors: [])
    }
    
    static func update(_ state: inout State, event: Event) -> Effect? {
        switch (state, event) {
        case (.editing(var data, _), .updateName(let name)):
            data.name = name
            state = .editing(data, errors: [])
            return validateEffect(data)
            
        case (.editing(var data, _), .updateEmail(let email)):
            data.email = email
            state = .editing(data, errors: [])
            return validateEffect(data)
            
        case (.editing(var data, _), .updatePhone(let phone)):
            data.phone = phone
            state = .editing(data, errors: [])
            return validateEffect(data)
            
        case (.editing(let data, _), .validationComplete(let errors)):
            state = .editing(data, errors: errors)
            return nil
            
        case (.editing(let data, let errors), .submit):
            guard errors.isEmpty && data.isValid else { return nil }
            state = .submitting(data)
            return submitEffect(data)
            
        case (.submitting, .submissionComplete(let result)):
            state = .submitted(result: result)
            return nil
            
        case (_, .cancel):
            state = .cancelled
            return nil
            
        default:
            return nil
        }
    }
    
    static func validateEffect(_ data: FormData) -> Effect {
        Effect(id: "validate") { env, input in
            let errors = await env.validateForm(data)
            try input.send(.validationComplete(errors))
        }
    }
    
    static func submitEffect(_ data: FormData) -> Effect {
        Effect { env, input in
            do {
                let result = try await env.submitForm(data)
                try input.send(.submissionComplete(result))
            } catch {
                try input.send(.submissionComplete(.failure(error)))
            }
        }
    }
}

// Seed 001, Oak's "Understanding Finite State Machines": "Include Relevant Data in States", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.

enum FormState {
    case editing(fields: [String: String], errors: [ValidationError])
    case validating(fields: [String: String])
    case valid(submissionData: SubmissionData)
    case submitting(submissionData: SubmissionData)
    case submitted(result: SubmissionResult)
}

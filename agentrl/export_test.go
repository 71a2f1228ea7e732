package agentrl

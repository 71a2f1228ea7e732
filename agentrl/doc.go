// Package agentrl is the Go port of the book's `arl` library for Chapter 12 (multi-turn agents): the BugFix gym
// (tasks, tokenizer, environments, episodes and trajectories) and the RL training code built on it.
//
// # The BugFix gym
//
// A task is a one-function program in a tiny Python-like language (see RunProgram) with one injected bug, and an
// issue that says what the function should compute, never what is wrong:
//
//	issue:  tally should sum squares above 5
//	source: def tally ( vals ) : / total = 1 / for v in vals : / if v > 5 : / total = total + v * v / return total
//
// Every program has the same five repair sites, and each repair op (Ops) toggles one of them between its correct
// and its buggy form: fix_comparison (> and < are correct, >= and <= the bug), fix_off_by_one (a loop over
// "xs [ 1 : ]" skips the first item), fix_init (the accumulator starts at 1), fix_operator (the update subtracts)
// and fix_return ("return 0"). The bug is visible in the source as a local cue (InferOp), not in the issue, so a
// policy must read before it can do better than the blind ceiling of 0.200 on the held-out tasks; applying the wrong
// op adds a second bug, and hidden tests, run by a small interpreter, decide the verdict.
//
// An episode is a token sequence. The policy writes calls, the env answers with observations:
//
//	<bos> | tally should sum squares above 5 | <call> read </call> | <obs> def tally ( vals ) : <nl> ... </obs> |
//	<call> edit fix_init </call> | <obs> edit applied : total = 0 </obs> | <call> submit </call>
//
// with owners template | prompt | policy | template tool template | ... (Owner); only policy tokens are actions.
// Calls: read (the compact source, about 31 tokens), edit OP ("edit applied : " and the edited line), test
// ("passed k of n" on the visible tests, with the first failing input) and submit (ends the episode, graded by the
// hidden tests). A malformed call, an unknown tool or op gets an error observation, costs a turn and counts in
// Info.NInvalid; an edit beyond the budget is refused the same way (the observation repeats the edited line) but
// is not invalid.
//
// # Training
//
// The rest of the package is the training side: RLConfig, the KV-cache samplers (RolloutBatch, SampleGroups,
// SampleStep, ContextRolloutBatch), advantages (ComputeAdvantages, GAEAdvantages, TurnAdvantages), the update
// (RLUpdate), the GRPO loop (TrainRL), evaluation (Evaluate, EvaluateContext) and the RL base agent (MakeRLBase,
// trained on scripted demonstrations, see BaseConfig). A training run is also a value, a Loop (GRPO, TrainCredit,
// TrainContext; BaseRun for the base agent), whose fields are its arguments: Train runs it step by step, and a
// caller wraps that loop from outside. The notebooks' result store does (packages store, codekey and runs): it keys
// each run by its value and resumes it after an interrupt. This package knows nothing of it.
//
// # One-hop naming: arl name → Go name (gym)
//
// BEGIN gym naming table
//
//	arl.make_tasks(split)                      MakeTasks(split) ([]Task, error); splits SplitTrain, SplitHeldout, SplitAll
//	Task (dataclass), dataclasses.replace      Task (a value: copy and assign)
//	task.issue, task.source                    Task.Issue, Task.Source (also Task.Op, Task.Kind, Task.Visible, Task.Hidden)
//	arl.build_tokenizer(tasks)                 BuildTokenizer(tasks) *Tokenizer
//	tok.pad_id, tok.call_end_id, tok.stoi      Tokenizer.PadID, Tokenizer.CallEndID, Tokenizer.Stoi
//	tok.stoi['<nl>']                           Tokenizer.NewlineID (== Stoi[TokNewline])
//	tok.encode / tok.decode                    Tokenizer.Encode, Tokenizer.Decode, Tokenizer.EncodeCall
//	arl.randomize_names(task, rng)             RandomizeNames(task, rng *rand.Rand) Task
//	random.Random(seed)                        NewRNG(seed uint64) *rand.Rand
//	arl.compact_source(source)                 CompactSource(source)
//	arl.infer_op(source)                       InferOp(source) (string, error)
//	(the repair ops)                           Ops(); OpComparison, OpOffByOne, OpInit, OpOperator, OpReturn; ApplyOp
//	arl.make_reward(kind, step_penalty=..,     MakeReward(kind, RewardOptions{StepPenalty, WrongSubmit, InvalidPenalty})
//	    wrong_submit=.., invalid_penalty=..)
//	reward='hidden'                            RewardHidden; HiddenReward
//	info dict                                  Info{Submitted, HiddenPass, NInvalid, NTurns, NReads, NTests, NEdits, Stop}
//	info['stop'] values                        StopSubmitted, StopMaxTurns, StopTruncated, StopInvalid
//	env.reset / env.step                       Env.Reset(task) string, Env.Step(action) (obs, reward, done, info)
//	(end an episode from outside)              Env.Stop(reason) (reward, info)
//	arl.EditBudgetEnv(max_turns, reward,       NewEditBudgetEnv(maxTurns, reward, maxEdits) (*EditBudgetEnv, error)
//	    max_edits)
//	env.done, env.n_invalid, env.reward_fn     EditBudgetEnv.Done, EditBudgetEnv.NInvalid, EditBudgetEnv.Reward
//	env.final_info(submitted)                  EditBudgetEnv.FinalInfo(submitted)
//	EarlyStopEnv (#@save)                      EarlyStopEnv (chapter.go), NewEarlyStopEnv
//	single_turn (#@save)                       SingleTurn (chapter.go)
//	MixedTurnEnv (#@save)                      MixedTurnEnv (chapter.go), NewMixedTurnEnv
//	arl.LoggedEnv(env, log)                    LoggedEnv{Env: env, Log: &log}
//	arl.log_by_step(history, log)              LogByStep(history []StepStats, log []Info); also of Run.LogTask (ours: each
//	                                               logged episode's index among its step's episodes)
//	arl.OWNER                                  Owner; OwnerTemplate, OwnerPrompt, OwnerPolicy, OwnerTool; Owners(), Owner.String
//	arl.MAX_CALL_TOKENS                        MaxCallTokens (8)
//	getattr(model, 'max_len', 256)             ContextLen (256)
//	arl.Episode(env, task, tok, max_turns,     NewEpisode(env, task, tok, maxTurns, maxLen) *Episode
//	    max_len)
//	e.ids, e.owner, e.turn, e.actions, e.done  Episode.IDs, Episode.Owner, Episode.Turn, Episode.Actions, Episode.Done
//	e.act(call_ids, call_logps)                Episode.Act(call, logp)
//	arl.make_trajectory(e)                     MakeTrajectory(e) Trajectory
//	arl.Trajectory(ids, action_mask, logp,     Trajectory{IDs, ActionMask, Logp, Reward, Info, Turn, Owner}
//	    reward, info, turn=, owner=)
//	arl.collate(trajs, pad_id)                 Collate(trajs, padID) Batch
//	batch['ids'], ['action_mask'],             Batch.IDs, Batch.ActionMask, Batch.TurnIDs, Batch.Rewards (row-major,
//	    ['turn_ids'], ['rewards']                  also Batch.Logp and Batch.Owner)
//	arl.pad_rows(rows, length, value)          PadRows(rows, width, pad) []int32
//	arl.behavior_stats(trajs)                  BehaviorStats(trajs) Stats; InfoStats(infos) for env logs
//	context_view (#@save)                      ContextView(ids, owner, turn, k, keepObs) (chapter.go; keepObs < 0 is None)
//	keep_obs=n (the samplers' argument)        KeepObs(n), a ContextPolicy (ours: a context policy is a value with a
//	                                               View method, so a reader's own policy replaces it)
//	(the call grammar)                         CallText(tool, args...), ParseCall(text); ToolRead, ToolEdit, ToolTest, ToolSubmit
//
// Training, evaluation and results (the chapter's own #@save code is in chapter.go and chapter_train.go):
//
//	arl.RLConfig(**overrides)                  DefaultRLConfig() RLConfig, then set fields; RLConfig.Validate
//	cfg.reward = make_reward('hidden', ...)    RLConfig.Reward = RewardSpec{Kind, StepPenalty, WrongSubmit, InvalidPenalty}
//	arl.make_env(cfg)                          MakeEnv(cfg) (Env, error); EnvFactoryOf(cfg); env_factory=... EnvFactory
//	torch.Generator().manual_seed(s)           NewRNG(s)
//	arl.make_rl_base(tok)                      MakeRLBase(eng, tok); TrainBase; BaseRun{Engine, Config, Tasks, Tok, Env} (stored: runs.Base);
//	                                               (BaseRun.Env: ours, the demonstrations' environment)
//	arl.make_critic(policy)                    gomlxmodel.NewCritic(policy, seed)
//	model(ids) / copy.deepcopy(model)          gomlxmodel.Model.Logits / Model.Clone
//	arl.sample_next(logits, temperature, g)    SampleNext(logits, temperature, rng) (id, logp)
//	arl.rollout_batch(model, envs, tasks, tok, RolloutBatch(model, envs, tasks, tok, maxTurns, temperature, rng)
//	    max_turns, temperature, g)
//	arl.sample_groups(model, factory, tasks,   SampleGroups(model, factory, tasks, tok, cfg, rng)
//	    tok, cfg, g)
//	arl.sample_step(...)                       SampleStep(model, factory, tasks, tok, cfg, rng) (trajs, tasks, error)
//	arl.selected_log_probs / sequence_log_probs gomlxmodel.Model.SequenceLogProbs(ids, B, T)
//	logits.grad of arl.reinforce_loss          gomlxmodel.Model.LogitGradAbsSum(ids, B, T, adv, mask)
//	arl.compute_advantages(batch, cfg)         ComputeAdvantages(rewards, groupSize)
//	arl.outcome_rewards(verdict, mask)         OutcomeRewards(verdict, mask)
//	arl.returns_to_go(rewards, mask)           ReturnsToGo(rewards, mask)
//	arl.masked_mean(x, mask)                   MaskedMean(x, mask)
//	arl.gae_advantages(r, v, mask, γ, λ)       GAEAdvantages(r, v, mask, γ, λ) (adv, returns)
//	arl.turn_advantages(r, v, mask, turns, γ, λ) TurnAdvantages(r, v, mask, turns, γ, λ); TurnCredit (one row)
//	arl.critic_values(critic, ids)             CriticValues(critic, batch)
//	arl.value_loss(...) + optimizer step       ValueStep(critic, batch, oldValues, returns, clip, lr)
//	arl.rl_update(policy, opt, batch, adv,     RLUpdate(policy, batch, adv [B][T-1], cfg, rng); BroadcastAdvantages
//	    cfg, generator=g)                          for sequence advantages
//	arl.train_rl(policy, tasks, tok, cfg,      TrainRL(policy, tasks, tok, cfg, steps, factory) ([]StepStats, error);
//	    steps, env_factory=)                       GRPO{Tasks, Tok, Cfg, Steps, Env, ...} (a Loop; RunLoop)
//	arl.evaluate(policy, tasks, tok, n, ...)   Evaluate(policy, tasks, tok, n, rng, cfg, factory) (Stats, error)
//	per_call_rewards (#@save)                  PerCallRewards(trajs, mask, stepPenalty)
//	masked_whiten (#@save)                     MaskedWhiten(x, mask)
//	call_sample (#@save)                       CallSample(episode, view, callIDs, callLogp)
//	context_rollout_batch (#@save)             ContextRolloutBatch(model, envs, tasks, tok, viewOf, maxTurns, temperature, rng)
//	train_context                              TrainContext{Tasks, Tok, Cfg, Steps, Context} (a Loop); ContextStep (one step)
//	train_credit                               TrainCredit{Tasks, Tok, Cfg, Steps, Scheme, Lambda, Critic} (a Loop);
//	                                               CriticAdvantages (its advantages, also CreditAdvantages')
//	evaluate_context (#@save)                  EvaluateContext(model, tasks, tok, viewOf, nSamples, seed, cfg)
//	(cells run as separate programs)           packages store, codekey, runs (WriteRun/ReadRun are a run's bytes)
//	(ours, §12.7's remedies, run)              RewardSpec.FreeCalls (a free allowance of calls);
//	                                               RampedPenalty (a step cost ramped in over training: a
//	                                               configuration per step, WithSchedule)
//	(ours: the GRPO loop's seams)              GRPO.With(opts ...RunOption): WithAdvantages(Advantages) (GroupAdvantages
//	                                               is the default; CreditAdvantages{Scheme, Lambda} is 12.2's),
//	                                               WithMetric (Run.Metrics), WithSchedule (RampedPenalty),
//	                                               WithCritic, FreshOptimizer, InEnv, OnTasks; StepBatch is what they see
//	(ours: a loop of one's own)              any Loop (Plan, Start, Step); RunLoop(loop, base), Train(loop, run, ...)
//	(ours: V(s_K) of the last state)           FinalValues(critic, trajs, padID)
//	(ours, §12.4: what a policy would do next) CallProbs(policy, views, calls, padID)
//	(ours, §12.2: the critic's "a few percent") ExplainedVariance(values, returns, mask)
//	(ours, §12.3: the blind ceiling)           BlindPass(tasks, op)
//
// END gym naming table
package agentrl

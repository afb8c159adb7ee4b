"""Whisper's gate with a model that is not linear in its inputs, judged leave-one-batch-out (issue 11, session 21).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_trees /tmp/dev-gate.json                 # every variant of RULE beside today's
    python -m bench.whisper_gate_trees /tmp/dev-gate.json --loss          # LOBO log-loss and AUC only
    python -m bench.whisper_gate_trees /tmp/dev-gate.json --operating     # item 3: thresholds held out, the second memory
    python -m bench.whisper_gate_trees /tmp/dev-gate.json --final stumps:25   # the chosen model for a real run

THE RULE (written down and committed before any figure of this tool was read; session 21, gate8).

Data: a fresh `--gate-dump` of dev 1-11 (bench/whisper_gate_fit.prepared: FRESH_BATCHES out; SEALED_BATCHES out too).
Hits are recall's hits the logistic gate judges; the label is "expected or accepted memory"; the nine inputs are
whisper.stages.gate.GATE_INPUTS as the dump holds them, plus `follow_up` (the call is a follow-up: the route the
gate is on, production knows it as run.follow_up) where a variant says so.

Variants, every one fitted by this script with numpy only, each a small table a conf file can hold:
  nine:1        the nine-input logistic at L2 1 (session 20's reference refit).
  stumps:K      the nine-input logistic at L2 1 as the start, then K rounds of gradient boosting of depth-1 trees
                (stumps) on the log-loss, shrinkage 0.1, each leaf one Newton step with L2 1 on the leaf, splits at
                the training rows' quantiles (32 bins per input); K in {10, 25, 50}.
  trees2:K      the same with depth-2 trees (one split, then one split in each half, each chosen greedily); K in
                {10, 25}.
  stumps+f:25   stumps:25 with `follow_up` as a tenth input the trees may split on.
  hinge         the nine-input logistic at L2 1 plus at most four terms, standardised, from a fixed set: the 36
                products of two of the nine inputs and hinges max(0, v - q) of g, cosine, margin, memory_cover and
                prompt_words at their 25th, 50th and 75th percentiles on the training rows (15); forward selection,
                each step adding the term that lowers the training batches' leave-one-batch-out log-loss most, stopping
                when the best term lowers it by less than 0.0005 per hit. Selected inside each outer fold on its ten
                batches (the threshold's inner fits reuse that fold's terms).

Judging (the brief, issue 11): for each dev batch b of 1-11 the variant is fitted on the other ten; the threshold is
gate7's rule (bench/whisper_gate_lobo.choose: on the ten batches, every hit scored by the variant fitted without its
own batch, the threshold of bench/whisper_gate_lobo.GRID with the most hits whose pooled precision and silence reach
today's gate's (whisper/conf.py GATE_WEIGHTS at GATE_LOGIT) on those ten; a tie: the higher); batch b is scored at it
and the eleven batches' counts are summed (LOBO hits / precision / silence), beside today's gate as shipped. Also the
LOBO log-loss per hit and AUC (every batch scored by the fit on the other ten).
A variant is a candidate only if its LOBO hits are higher than today's as shipped and its LOBO precision and silence
are not lower; among candidates the one with the most LOBO hits (a tie: the lower LOBO log-loss) is chosen, and only
that one is fitted on all of dev 1-11 (`--final`, threshold by the rule on the batches' left-out scores), shipped in
a temporary build and run for real (`bench.whisper_stores --split dev --show`): it is merged only if the real run on
dev 1-11 has more hits than today's at precision and silence not lower, and batch 12 dev (run once, for that one
variant) has hits not fewer and precision and silence not lower than today's 0.481 (26/54) / 0.643 (27/42) / 0.696
(16/23). No candidate: nothing changes, and every figure goes in docs/benchmarks.md.

Item 3, the operating point (`--operating`; today's weights and, if one is chosen, the chosen variant):
  a. the LOBO curve: per threshold of GRID (steps 0.1 and 0.33), the summed held-out counts and in how many of the
     eleven folds the held-out batch reaches precision >= 0.85 and silence >= 0.9;
  b. per fold, the lowest threshold at which the held-out batch reaches both (an oracle, not a rule) and the hits that
     costs against 0.33;
  c. the rule for a new default: in each fold the threshold with the most hits on the ten training batches whose pooled
     precision >= 0.85 and silence >= 0.9 there (a tie: the higher; none: the nearest, as bench/whisper_gate_lobo.choose);
     GATE_LOGIT changes only if this rule's LOBO counts reach precision >= 0.85 and silence >= 0.9 summed over the
     eleven held-out batches where 0.33 does not, or keep more hits at precision and silence not lower; and then only
     if batch 12 dev is not worse in the real run.
  d. the second memory (the cap of 2): of the prompts where two memories are whispered and the first is right, how
     often the second is wrong (and, summed, how often it is the answer); then a second threshold t2 >= t for the
     second memory of the logistic route, chosen per fold on the ten training batches as the value of GRID >= t with
     the most hits whose pooled precision and silence reach t2 = t's there (a tie: the higher), batch b scored at
     it. Kept only if LOBO hits are not lower and LOBO precision is higher, silence not lower, and batch 12 dev is
     not worse in the real run.
"""

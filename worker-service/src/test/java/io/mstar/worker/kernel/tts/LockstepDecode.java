package io.mstar.worker.kernel.tts;

import java.util.ArrayList;
import java.util.List;

import io.mstar.model.ToyTtsModel;
import io.mstar.request.SamplingConfig;
import io.mstar.tensor.device.Device;
import io.mstar.worker.kernel.KvStep;
import io.mstar.worker.kv.KvCache;
import io.mstar.worker.kv.TokenSampler;

/**
 * One lm (the reference on one worker, or one rank of a tensor-parallel group) generating for every prompt at once,
 * as the {@code lm} kernel walks it: one prefill call feeding {@code [BOS, prompt but its last byte]} of every prompt,
 * then decode steps each feeding every request's last token in one call and sampling the next. The ranks of a group
 * each run this with the same prompts, so they make the same calls in the same order.
 *
 * @param prompts  the prompts' bytes, each at least one
 * @param sampling every request's sampling settings
 * @param seeds    each request's sampling seed
 * @param steps    decode steps (tokens generated per request)
 */
record LockstepDecode(int[][] prompts, SamplingConfig sampling, long[] seeds, int steps) {

    /** A step's tokens from its logits (rows in prompt order; {@code generated} tokens so far). */
    @FunctionalInterface
    interface Sampling {
        int[] next(float[][] logits, List<KvStep> steps, int generated);
    }

    /** What one lm generated: {@code tokens[step][request]} and the logits they were sampled from. */
    record Trace(int[][] tokens, float[][][] logits) {
    }

    /** Draws every row on this lm, as the kernel does on one worker. */
    static int[] drawHere(float[][] logits, List<KvStep> steps, int generated) {
        int[] tokens = new int[logits.length];
        for (int j = 0; j < logits.length; j++) {
            tokens[j] = ToyTtsLmKernel.draw(steps.get(j), generated, logits[j]);
        }
        return tokens;
    }

    Trace run(LmBackend lm, Device device, KvCache cache, Sampling draw) {
        TokenSampler sampler = new TokenSampler();
        List<LmJob> jobs = new ArrayList<>();
        int[] next = new int[prompts.length];
        for (int i = 0; i < prompts.length; i++) {
            int[] prompt = prompts[i];
            int[] feed = new int[prompt.length];
            feed[0] = ToyTtsModel.BOS;
            System.arraycopy(prompt, 0, feed, 1, prompt.length - 1);
            cache.addRequest(id(i));
            int at = cache.appendTokens(id(i), feed.length);
            jobs.add(new LmJob(feed, at, cache.pages(id(i)), false));
            next[i] = prompt[prompt.length - 1];
        }
        lm.run(device, cache.pool(), cache.layout(), jobs);
        int[][] tokens = new int[steps][];
        float[][][] logits = new float[steps][][];
        for (int s = 0; s < steps; s++) {
            jobs.clear();
            List<KvStep> kv = new ArrayList<>();
            for (int i = 0; i < prompts.length; i++) {
                int at = cache.appendTokens(id(i), 1);
                int[] pages = cache.pages(id(i));
                jobs.add(new LmJob(new int[] {next[i]}, at, pages, true));
                kv.add(new KvStep(id(i), cache.pool(), cache.layout(), pages, at, 1, sampling, seeds[i], sampler,
                        null));
            }
            logits[s] = lm.run(device, cache.pool(), cache.layout(), jobs);
            next = draw.next(logits[s], kv, s);
            tokens[s] = next;
        }
        for (int i = 0; i < prompts.length; i++) {
            cache.releaseRequest(id(i));
        }
        return new Trace(tokens, logits);
    }

    private static String id(int request) {
        return "r" + request;
    }
}

"""REINFORCE on a small corridor world.

The agent starts in the middle of a corridor of cells. Moving right until the last cell pays
+1; falling off the left end pays -1; every step costs a little. Each update samples a batch of
episodes with the current policy, computes discounted returns, normalises them, and takes one
gradient step on -log pi(a|s) * G.
"""
import argparse
import random

import torch
from torch import nn
from torch.distributions import Categorical


class Corridor:
    def __init__(self, length=10, max_steps=40, step_cost=0.02, rng=None):
        self.length = length
        self.max_steps = max_steps
        self.step_cost = step_cost
        self.rng = rng or random.Random(0)

    def reset(self):
        self.pos = self.rng.choice((2, 3))
        self.t = 0
        return self.obs()

    def obs(self):
        x = torch.zeros(self.length)
        x[self.pos] = 1.0
        return x

    def step(self, action):
        # action 0 = left, 1 = right; a slippery floor moves the other way 10% of the time
        move = 1 if action == 1 else -1
        if self.rng.random() < 0.1:
            move = -move
        self.pos += move
        self.t += 1
        if self.pos >= self.length - 1:
            return self.obs_clamped(), 1.0, True
        if self.pos <= 0:
            return self.obs_clamped(), -1.0, True
        return self.obs(), -self.step_cost, self.t >= self.max_steps

    def obs_clamped(self):
        self.pos = min(max(self.pos, 0), self.length - 1)
        return self.obs()


class Policy(nn.Module):
    def __init__(self, n_obs, n_actions=2, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return Categorical(logits=self.body(obs))


def run_episode(env, policy):
    log_probs, rewards = [], []
    obs, done = env.reset(), False
    while not done:
        dist = policy(obs)
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        obs, reward, done = env.step(action.item())
        rewards.append(reward)
    return torch.stack(log_probs), rewards


def discounted(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return torch.tensor(out[::-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--updates-per-epoch", type=int, default=12)
    p.add_argument("--episodes", type=int, default=16, help="episodes per update")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--gamma", type=float, default=0.97)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    env = Corridor(rng=random.Random(args.seed))
    policy = Policy(env.length)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)

    update = 0
    for epoch in range(args.epochs):
        epoch_returns = []
        for _ in range(args.updates_per_epoch):
            all_logp, all_ret, totals = [], [], []
            for _ in range(args.episodes):
                logp, rewards = run_episode(env, policy)
                all_logp.append(logp)
                all_ret.append(discounted(rewards, args.gamma))
                totals.append(sum(rewards))
            logp = torch.cat(all_logp)
            ret = torch.cat(all_ret)
            ret = (ret - ret.mean()) / (ret.std() + 1e-8)
            loss = -(logp * ret).sum() / args.episodes

            opt.zero_grad()
            loss.backward()
            opt.step()
            update += 1
            mean_return = sum(totals) / len(totals)
            epoch_returns.append(mean_return)
            if update % 4 == 0:
                print(f"update {update:3d}  loss {loss.item():8.4f}  mean return {mean_return:+.3f}")
        print(f"epoch {epoch}  avg return {sum(epoch_returns) / len(epoch_returns):+.3f}")


if __name__ == "__main__":
    main()
